"""The import contracts hold on the source, and each breaks on the import it forbids.

``make test`` runs ``lint-imports`` (the ``layers`` target); these run the same
contracts from pyproject.toml in process, so ``pytest tests/architecture`` says
the same, and they prove each contract can fail: one import added to the real
graph (a cycle, a client library outside its adapter, a layer read upwards)
must break the contract named for it.
"""

from __future__ import annotations

from copy import deepcopy

import grimp
import pytest

from tests.architecture.import_contracts import broken, contracts, cycles, source_graph


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return source_graph()


def test_every_contract_is_kept_on_the_source(graph: grimp.ImportGraph) -> None:
    assert broken(graph) == []


def test_the_source_has_no_import_cycle(graph: grimp.ImportGraph) -> None:
    assert cycles(graph, "gitmedic") == []


def test_the_contracts_are_all_read(graph: grimp.ImportGraph) -> None:
    names = [c.name for c in contracts()]
    assert len(names) == len(set(names)) >= 20
    assert "No import cycles in any package" in names


CYCLE = "No import cycles in any package"
RECONCILER = "reconciler: transaction > sync | oracles | manifests > health | config > gateways"
BOT = (
    "bot: cli > service > controller > transactions > commands | discover | memory > "
    "responder > render > policy > forges | common"
)
LOOP = "bot.controller: assemble > loop > answer > transactions > wiring > decisions"
CLI = "bot.cli: main > one module per command > their helpers"
SERVICE = "bot.service: wiring > apps | settings | metrics > actions | webhook > shared parts"
TRANSACTION = "reconciler.transaction: runner > machine > verdicts > ports > model > window"
DETECTORS = "detectors: runner > detectors > spec > snapshot > values"


@pytest.mark.parametrize(
    ("importer", "imported", "contract"),
    [
        # cycles: each closes a path that exists today
        ("gitmedic.reconciler.repofs", "gitmedic.reconciler.manifests.load", CYCLE),
        ("gitmedic.bot.common.exits", "gitmedic.bot.cli.main", CYCLE),
        ("gitmedic.detectors.origin", "gitmedic.detectors.snapshot", CYCLE),
        ("gitmedic.reconciler.manifests.helm_binary", "gitmedic.reconciler.manifests.helm", CYCLE),
        # layers read upwards
        ("gitmedic.reconciler.config", "gitmedic.reconciler.manifests.parse", RECONCILER),
        ("gitmedic.reconciler.manifests.apply", "gitmedic.reconciler.oracles", RECONCILER),
        ("gitmedic.reconciler.secret_scan", "gitmedic.reconciler.config", RECONCILER),
        (
            "gitmedic.reconciler.transaction.model",
            "gitmedic.reconciler.transaction.journal",
            TRANSACTION,
        ),
        ("gitmedic.bot.service.settings", "gitmedic.bot.cli.run", BOT),
        ("gitmedic.bot.render.sarif", "gitmedic.bot.cli.run", BOT),
        ("gitmedic.bot.common.sqlite_file", "gitmedic.bot.policy.decide", BOT),
        ("gitmedic.bot.controller.transact", "gitmedic.bot.controller.answer", LOOP),
        ("gitmedic.bot.controller.loop", "gitmedic.bot.service.wiring", BOT),
        ("gitmedic.bot.render.pr_body", "gitmedic.bot.responder.responder", BOT),
        ("gitmedic.bot.controller.loop", "gitmedic.bot.controller.assemble", LOOP),
        ("gitmedic.bot.cli.detect", "gitmedic.bot.cli.run", CLI),
        ("gitmedic.bot.service.webhook.handlers", "gitmedic.bot.service.wiring", SERVICE),
        ("gitmedic.bot.service.lock", "gitmedic.bot.service.live_actions", SERVICE),
        ("gitmedic.detectors.snapshot", "gitmedic.detectors.spec", DETECTORS),
        ("gitmedic.detectors.builtin.dns_policy_none", "gitmedic.detectors.runner", DETECTORS),
        # client libraries outside their adapters
        (
            "gitmedic.bot.controller.loop",
            "kubernetes",
            "kubernetes only in the live cluster adapters",
        ),
        ("gitmedic.bot.forges.local", "github", "PyGithub only in the GitHub forge"),
        (
            "gitmedic.reconciler.clock",
            "httpx",
            "httpx only in the HTTP client and the oracles and engine that speak HTTP",
        ),
        ("gitmedic.bot.responder.responder", "litellm", "litellm only in the LLM completion"),
        ("gitmedic.bot.service.wiring", "fastapi", "FastAPI only in the webhook app"),
        ("gitmedic.bot.service.wiring", "uvicorn", "uvicorn only in serve and its protocol"),
        (
            "gitmedic.bot.memory.rule",
            "cel_expr_python",
            "the CEL engine only in learned rules' evaluator and its sandboxed worker",
        ),
        (
            "gitmedic.reconciler.transaction.journal",
            "psycopg",
            "psycopg only in the PostgreSQL journal",
        ),
    ],
)
def test_one_import_against_a_contract_breaks_it(
    graph: grimp.ImportGraph, importer: str, imported: str, contract: str
) -> None:
    assert importer in graph.modules, "a module of the source, not a typo"
    changed = deepcopy(graph)
    changed.add_import(importer=importer, imported=imported, line_number=1, line_contents="")
    assert contract in broken(changed)


def test_a_cycle_through_a_package_and_its_own_module_is_found() -> None:
    """acyclic_siblings compares a package's children only; this one it cannot see."""
    graph = grimp.ImportGraph()
    for importer, imported in [("pkg", "pkg.a"), ("pkg.a", "pkg"), ("pkg.b", "pkg.c")]:
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="pkg.c", imported="pkg.d")
    graph.add_import(importer="pkg.d", imported="pkg.b")
    assert cycles(graph, "pkg") == [["pkg", "pkg.a"], ["pkg.b", "pkg.c", "pkg.d"]]
