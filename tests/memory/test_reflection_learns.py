"""A novel fault fixed by the LLM is learned; the same fault on another object then costs nothing.

The whole path on a real app in a real repo: reflection writes memory (LLM-written,
validated by the guard), the memory passes ``check_memory``, the learned detector
loaded through the sandboxed loader finds the fault on a *different* Service, the
learned playbook routes and binds that finding, and restoring the bound field from
Git history gives back the original file byte for byte, with no LLM call.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.learned import load_learned
from gitmedic.bot.memory.outcomes import read_outcomes
from gitmedic.bot.memory.reflection import LlmConfig, app_names, reflect
from gitmedic.bot.responder.playbooks import bind, builtin_playbooks, repo_playbooks, route
from gitmedic.detectors import Resource, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.history import restore_fields
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.memory.scenario import (
    FIELD,
    LLM_DETECTOR,
    MANIFESTS,
    NAMESPACE,
    apply_change,
    commit_all,
    healthy,
    incident,
    llm_writes,
    manifest_repo,
)


def test_the_same_fault_on_another_object_is_fixed_by_the_learned_playbook(
    tmp_path: Path,
) -> None:
    repo = manifest_repo(tmp_path)
    original = (repo / MANIFESTS).read_text()
    inp = incident(healthy(repo))
    llm = llm_writes(LLM_DETECTOR)

    change = reflect(repo, inp, llm=LlmConfig("openai/scripted", llm))

    assert change.notes == ()
    assert change.playbook == "service-publishes-not-ready"
    assert change.detector == ".gitmedic/detectors/service_publishes_not_ready.py"
    assert change.branch == "gitmedic/inc-1/memory"
    assert all(path.startswith(".gitmedic/") for path in change.files)
    assert llm.calls == 2 and change.tokens == 2000
    apply_change(repo, change.files)
    assert check_memory(repo, app_names=app_names(inp.snapshots)) == []
    before_memory = commit_all(repo, "memory")

    cart = Resource("Service", NAMESPACE, "cartservice", "v1")
    ManifestRepo(repo, namespace=NAMESPACE).apply([Edit(Op.INSERT, MANIFESTS, cart, FIELD, True)])
    commit_all(repo, "cartservice: publish not-ready addresses")

    learned = load_learned(repo, taken=[d.id for d in builtin_registry()])
    assert learned.refused == ()
    evaluation = run_detectors([*builtin_registry(), *learned.detectors], healthy(repo))
    assert evaluation.errors == ()
    found = [f for f in evaluation.findings if f.detector == "learned-publish-not-ready"]
    assert [f.resource for f in found] == [cart]

    books = route([*builtin_playbooks(), *repo_playbooks(repo)], found[0])
    assert [b.id for b in books] == ["service-publishes-not-ready"]
    fix = bind(books[0], found[0])
    assert fix.target == cart and fix.paths == ("spec.publishNotReadyAddresses",)
    manifests = ManifestRepo(repo, namespace=NAMESPACE)
    edits = restore_fields(manifests, fix.target, [parse_path(p) for p in fix.paths], before_memory)
    manifests.apply(edits)
    assert (repo / MANIFESTS).read_text() == original
    assert llm.calls == 2  # the second occurrence asked the LLM nothing


def test_the_outcome_is_appended_with_the_memory_it_wrote(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    change = reflect(repo, incident(healthy(repo)), llm=LlmConfig("m", llm_writes(LLM_DETECTOR)))
    apply_change(repo, change.files)
    [record] = read_outcomes(repo)
    assert record.id == "inc-1" and record.strategy == "llm"
    assert record.tokens == 5200 + 2000  # the fix's tokens plus reflection's own
    assert record.memory == (change.detector, "service-publishes-not-ready")


def test_the_templated_form_generalises_for_the_bisect_strategy(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    inp = incident(healthy(repo), strategy="bisect")

    change = reflect(repo, inp)  # no LLM configured: bisect never needs one

    assert change.playbook == "service-publish-not-ready-addresses"
    assert change.tokens == 0
    detector = change.files[change.detector]
    assert "frontend" not in detector and "True" in detector
    playbook = change.files[".gitmedic/playbooks/service-publish-not-ready-addresses/README.md"]
    assert "paths:\n  - spec.publishNotReadyAddresses" in playbook
    assert (
        "- [service-publish-not-ready-addresses]" in change.files[".gitmedic/playbooks/README.md"]
    )
    apply_change(repo, change.files)
    assert check_memory(repo, app_names=app_names(inp.snapshots)) == []


def test_a_covered_or_failed_fix_writes_only_the_outcome(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base = incident(healthy(repo), strategy="playbook")
    covered = replace(base.outcome, playbooks=("x",), playbooks_applied=("x",))
    reverted = replace(base.outcome, status="reverted")
    for record, reason in (
        (covered, "the playbook x already covers this fault"),
        (reverted, "the transaction ended reverted"),
    ):
        change = reflect(repo, replace(base, outcome=record))
        assert list(change.files) == [".gitmedic/outcomes.jsonl"]
        assert reason in change.notes[0] and change.detector == ""
        assert change.title == "gitmedic memory: record the outcome of inc-1"
