"""The loop's verification window runs the combined oracles, each no worse than before.

A real loop over the sim and the local forge: a change is merged, the sim deploys
it, and the window judges it by the cluster state, the sim's alerts, HTTP probes
(the sim's own HTTP surface on 127.0.0.1) and the detectors. The detectors given
to the loop leave out ``service-target-port``, so a Service moved to a port no pod
serves is a regression only the runtime oracles can see.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.config import DEFAULT_POLICY, ProbeConfig
from gitmedic.reconciler.oracles import AlertsOracle
from gitmedic.reconciler.transaction import (
    Journal,
    MachineConfig,
    Outcome,
    Phase,
    Plan,
    Runner,
    TxnState,
    VerdictPhase,
)
from gitmedic.sim.faults.runtime import database_auth_revoked
from gitmedic.sim.server import serve
from tests.support.stepping import settle_loop_txn, window
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

UNSEEN_BY_DETECTORS = ("service-target-port", "probe-port")
ALERTS_LINE = (
    "alerts of namespace shop from the simulator's alert rules: none firing that was not before"
)

pytestmark = pytest.mark.integration  # whole transactions through their verification windows


def make_loop(tmp: Path, cluster: SimCluster, **config: Any) -> Loop:
    repo = tmp / "manifests"
    settings = LoopConfig("shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY, **config)
    detectors = [d for d in builtin_registry() if d.id not in UNSEEN_BY_DETECTORS]
    return Loop(settings, cluster, LocalForge(repo), Journal(tmp / "j.sqlite"), detectors)


def edit(kind: str, name: str, path: list[Any], value: Any, file: str) -> dict[str, Any]:
    resource = {"kind": kind, "namespace": NAMESPACE, "name": name}
    return {"file": f"{APP}/{file}", "op": "set", "path": path, "value": value,
            "resource": resource}  # fmt: skip


MOVE_CATALOG_PORT = edit("Service", "catalog", ["spec", "ports", 0, "targetPort"], 3551,
                         "catalog.yaml")  # fmt: skip
HARMLESS = edit("Deployment", "cart", ["metadata", "labels", "app"], "cart-api", "cart.yaml")


def start(loop: Loop, change: dict[str, Any]) -> tuple[str, Any]:
    """Plan a transaction for ``change`` at a checkpoint taken now; (txn id, its ports)."""
    checks = loop.checks()
    plan = Plan(
        txn_id="inc-1/attempt-1", app="shop", incident="inc-1", attempt=1,
        strategy="playbook", branch="gitmedic/inc-1/attempt-1", title="a change",
        edits=(change,), base_sha=git(loop.config.repo, "rev-parse", "main"),
        mu_pre=checks.mu_before, targets=(), auto_merge=True, baselines=checks.baselines(),
    )  # fmt: skip
    loop.journal.create(plan, loop.clock.now())
    return plan.txn_id, loop.ports(checks)


def transact(loop: Loop, change: dict[str, Any]) -> TxnState:
    return settle_loop_txn(loop, *start(loop, change))


def test_a_change_that_makes_an_alert_fire_is_reverted_though_no_finding_is_new(
    tmp_path: Path,
) -> None:
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    loop = make_loop(tmp_path, cluster, window_s=180.0)

    state = transact(loop, MOVE_CATALOG_PORT)

    assert state.outcome is Outcome.REVERTED
    assert "verification failed" in state.reason
    worse = [line for line in state.feedback if " got worse: " in line]
    assert worse and all(line.startswith("alerts got worse: ") for line in worse)
    assert any("HighErrorRate" in line and 'service="frontend"' in line for line in worse)
    assert not any(line.startswith("detectors") for line in state.feedback)
    assert git(loop.config.repo, "diff", state.plan.base_sha, "main", "--", APP) == ""


def test_alerts_firing_before_the_change_do_not_fail_it(tmp_path: Path) -> None:
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    database_auth_revoked(cluster.sim, "catalog")
    cluster.sim.run(120)  # HighErrorRate holds for its 60 s and fires
    assert any(a["labels"]["alertname"] == "HighErrorRate" for a in cluster.alerts())
    loop = make_loop(tmp_path, cluster, window_s=120.0)

    state = transact(loop, HARMLESS)

    assert state.outcome is Outcome.COMMITTED, state.reason
    assert any(line.startswith("alert HighErrorRate firing") for line in state.feedback)
    assert state.mu_post is not None and 0 < state.mu_post <= state.plan.mu_pre


def test_a_revert_is_judged_once_its_rollback_had_the_window_to_settle(
    tmp_path: Path,
) -> None:
    """cart's readiness probe moves to a port it does not serve: the rollout never gets
    healthy, so the change is undone. The revert counts as deployed once applied, while
    cart's pods still roll back; judged by its first reading (cart short of its replica)
    it would look worse than before and raise an alarm, but it restores the checkpoint."""
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    loop = make_loop(tmp_path, cluster)
    probe = ["spec", "template", "spec", "containers", 0, "readinessProbe", "tcpSocket", "port"]

    state = transact(loop, edit("Deployment", "cart", probe, 7071, "cart.yaml"))

    assert state.outcome is Outcome.REVERTED, state.reason
    assert "not deployed" in state.reason
    assert state.mu_post == state.plan.mu_pre == 0


def test_the_plan_lists_exactly_the_oracles_that_run(tmp_path: Path) -> None:
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    probe = ProbeConfig("http://127.0.0.1:9/healthz", timeout_s=0.5)
    checks = make_loop(tmp_path, cluster, probes=(probe,)).checks()

    assert [o.name for o in checks.oracles] == [
        "cluster", "alerts", "probe http://127.0.0.1:9/healthz", "detectors",
    ]  # fmt: skip
    assert checks.plan == (
        "cluster state of namespace shop: no object newly Degraded, Missing or Unknown, "
        "no workload with fewer ready replicas",
        ALERTS_LINE,
        "HTTP probe GET http://127.0.0.1:9/healthz: answers 2xx or 3xx unless it failed before",
        "detectors: no new critical finding",
    )


def test_the_pr_body_lists_the_oracles_of_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.bot.run_world import REAL, app_repo, run_json, with_fault

    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    with_fault(repo, app, namespace, "service-target-port", target=REAL["online-boutique"][2])

    code, out = run_json(repo, app, namespace, capsys)

    assert code == 0
    (txn,) = out["incidents"][0]["transactions"]
    body = LocalForge(repo).get_pr(txn["pr"]).body
    plan = body[body.index("these oracles are watched") : body.index("The change is kept")]
    assert [line for line in plan.splitlines() if line.startswith("- ")] == [
        "- cluster state of namespace boutique: no object newly Degraded, Missing or Unknown, "
        "no workload with fewer ready replicas",
        "- alerts of namespace boutique from the simulator's alert rules: none firing that "
        "was not before",
        "- detectors: no new critical finding",
    ]


# -- the sim over HTTP: a real Alertmanager answer, and probes ---------------------------


class ServedSim(SimCluster):
    """The sim whose alerts are read over HTTP from its Alertmanager surface."""

    url = ""

    def alerts_oracle(self) -> Any:
        return AlertsOracle(self.url, {"namespace": NAMESPACE}, request_timeout=2.0)


@contextmanager
def served(tmp: Path) -> Iterator[tuple[ServedSim, Any]]:
    cluster = ServedSim(baseline_repo(tmp), APP, NAMESPACE)
    with serve(cluster.sim.state) as url:
        cluster.url = url
        yield cluster, url


def test_an_alert_source_that_fails_during_the_window_holds_the_transaction(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (cluster, _):
        loop = make_loop(tmp_path, cluster)
        txn_id, ports = start(loop, HARMLESS)
        state = loop.journal.load(txn_id)
        while state.phase is not Phase.SYNCED:
            advanced = Runner(loop.journal, loop.clock, _machine(loop)).step(txn_id, ports)
            state = advanced.state
            loop.clock.sleep(advanced.wait_s)
    # the Alertmanager is gone from here on: the window cannot see the alerts

    state = settle_loop_txn(loop, txn_id, ports)

    assert state.phase is Phase.HELD and state.outcome is not Outcome.COMMITTED
    assert "Error" in state.reason
    assert any(line.startswith("alerts error: ") for line in state.feedback)


def test_a_probe_that_passed_before_and_fails_after_the_change_reverts_it(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (cluster, url):
        frontend = f"{url}/probe/{NAMESPACE}/frontend"
        loop = make_loop(tmp_path, cluster, probes=(ProbeConfig(frontend, timeout_s=2.0),))

        state = transact(loop, MOVE_CATALOG_PORT)

    assert state.outcome is Outcome.REVERTED
    assert f"probe {frontend} got worse: probe {frontend} failing" in state.feedback


def _machine(loop: Loop) -> Any:
    from gitmedic.reconciler.transaction import MachineConfig

    return MachineConfig(sync_timeout_s=loop.config.sync_timeout_s, poll_s=5.0)


def test_a_transaction_resumed_after_merge_is_judged_against_its_checkpoint(
    tmp_path: Path,
) -> None:
    """gitmedic stops after the merge; when it comes back the change's damage is already
    there (the alert fires). The plan recorded the checkpoint (mu before and each
    oracle's reading), so the resumed window still sees the regression and reverts it."""
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    loop = make_loop(tmp_path, cluster, window_s=120.0)
    txn_id, ports = start(loop, MOVE_CATALOG_PORT)
    state = loop.journal.load(txn_id)
    while state.phase is not Phase.MERGED:
        advanced = Runner(loop.journal, loop.clock, MachineConfig()).step(txn_id, ports)
        state = advanced.state
        loop.clock.sleep(advanced.wait_s)
    cluster.sim.run(180)  # the process is down; the regression's alert fires meanwhile
    assert any(a["labels"]["alertname"] == "HighErrorRate" for a in cluster.alerts())
    restarted = make_loop(tmp_path, cluster, window_s=120.0)

    resumed = settle_loop_txn(restarted, txn_id)

    assert resumed.outcome is Outcome.REVERTED, resumed.reason
    assert any("HighErrorRate" in line for line in resumed.feedback)


def test_checks_from_a_plans_baselines_keep_the_checkpoint_instead_of_reading_again(
    tmp_path: Path,
) -> None:
    """What makes the resumed window above honest even where mu does not move: each
    oracle compares with the checkpoint's reading, not with one taken at the restart."""
    cluster = SimCluster(baseline_repo(tmp_path), APP, NAMESPACE)
    loop = make_loop(tmp_path, cluster, window_s=60.0)
    checkpoint = loop.checks().baselines()
    database_auth_revoked(cluster.sim, "catalog")
    cluster.sim.run(120)  # after the checkpoint, HighErrorRate fires

    fresh, resumed = loop.checks(), loop.checks(checkpoint)

    assert resumed.baselines() == checkpoint and fresh.baselines()[ALERTS_LINE]
    # the sim runs on between the window's measurements, as it does under a transaction
    judged = window(list(resumed.oracles), loop.clock, advance=cluster.sim.run)
    assert judged.verdict.phase is VerdictPhase.FAILED
    again = window(list(fresh.oracles), loop.clock, advance=cluster.sim.run)
    assert again.verdict.phase is VerdictPhase.SUCCESSFUL
