"""The verification window is journaled measurements: one per step, resumed after a restart,
judged from the checkpoint and what was recorded; fail fast ends a wait at the failure limit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import MetricSpec, Reading
from gitmedic.reconciler.transaction import (
    Journal,
    MachineConfig,
    Outcome,
    Phase,
    Plan,
    Runner,
    TxnState,
)
from gitmedic.reconciler.transaction.verdict import Decision, fail_fast
from gitmedic.reconciler.transaction.verify import OracleVerifier
from gitmedic.reconciler.transaction.window import Measurement, OracleMark, Signal, Stage
from tests.support.stepping import settle
from tests.transaction.fakes import World, plan

CONFIG = MachineConfig(sync_timeout_s=300, poll_s=10, approval_poll_s=60, failure_limit=1)
CATALOG = "Deployment/shop/catalog"
EDIT = {
    "file": "apps/shop/catalog.yaml",
    "op": "set",
    "resource": {"kind": "Deployment", "namespace": "shop", "name": "catalog"},
    "path": "spec.template.spec.containers[0].image",
    "value": "shop-catalog:2.0.1",
}
CRASH = Signal(f"pod-crashloop {CATALOG}", (CATALOG, "Pod/shop/catalog-1"))


def _plan(firing: tuple[str, ...] = ()) -> Plan:
    return replace(plan(), edits=(EDIT,), firing=firing)


def _at(clock: FakeClock, *signals: Signal, stage: Stage = Stage.SYNC) -> Measurement:
    taken = Measurement(clock.now(), stage, "merge-1", signals)
    clock.sleep(10)
    return taken


def test_fail_fast_undoes_once_a_caused_signal_outlasts_the_failure_limit() -> None:
    clock = FakeClock(1000.0)
    p = _plan()
    quiet, one, two = _at(clock), _at(clock, CRASH), _at(clock, CRASH)
    assert fail_fast(p, [quiet, one], failure_limit=1) is None, "one bad measurement: tolerated"
    judged = fail_fast(p, [quiet, one, two], failure_limit=1)
    assert judged is not None and judged.decision is Decision.UNDO
    assert judged.reason == (
        f"failed fast: pod-crashloop {CATALOG} (caused by the change, absent at the checkpoint) "
        "in 2 consecutive measurements over 10s"
    )
    assert fail_fast(p, [one], failure_limit=0) is not None, "limit 0: the first one undoes"


def test_fail_fast_needs_the_same_signal_in_a_row_on_what_the_change_touched() -> None:
    clock = FakeClock(0.0)
    p = _plan()
    other = Signal("pod-crashloop Deployment/shop/cart", ("Deployment/shop/cart",))
    broken = [_at(clock, CRASH), _at(clock), _at(clock, CRASH)]
    assert fail_fast(p, broken, failure_limit=1) is None, "the streak was broken"
    assert fail_fast(p, [_at(clock, other), _at(clock, other)], failure_limit=1) is None
    before = _plan(firing=(CRASH.key,))  # it fired at the checkpoint: not the change's doing
    assert fail_fast(before, [_at(clock, CRASH), _at(clock, CRASH)], failure_limit=1) is None
    # A dependent: a workload reading a ConfigMap the change edited.
    config_edit = {**EDIT, "resource": {"kind": "ConfigMap", "namespace": "shop", "name": "cfg"}}
    reads = Signal(CRASH.key, (CATALOG, "ConfigMap/shop/cfg"))
    on_config = replace(plan(), edits=(config_edit,))
    assert fail_fast(on_config, [_at(clock, reads), _at(clock, reads)], failure_limit=1)


def test_a_crash_during_the_sync_wait_is_undone_at_the_failure_limit_not_the_timeout(
    tmp_path: Path,
) -> None:
    clock = FakeClock(1000.0)
    # The candidate never gets healthy; it crash-loops from 20 s after its merge.
    world = World(clock, sync_never=True, signals=lambda now: (CRASH,) if now >= 1020 else ())
    journal = Journal(tmp_path / "j.sqlite")
    p = _plan()
    journal.create(p, clock.now())
    state = settle(journal, p.txn_id, world, clock, CONFIG)
    assert state.outcome is Outcome.REVERTED
    undo = next(r for r in state.records if r.phase is Phase.UNDOING)
    merged = next(r for r in state.records if r.phase is Phase.MERGED)
    assert undo.at - merged.at == 30, "measured at 20 and 30 s: two in a row, undone at once"
    assert state.reason.startswith(f"failed fast: pod-crashloop {CATALOG}")
    sync = [m.at - merged.at for m in state.measurements if m.stage is Stage.SYNC]
    assert sync == [0, 10, 20, 30]


def test_a_streak_begun_before_a_restart_counts_after_it(tmp_path: Path) -> None:
    clock = FakeClock(1000.0)
    world = World(clock, sync_never=True, signals=lambda now: (CRASH,) if now >= 1020 else ())
    journal = Journal(tmp_path / "j.sqlite")
    p = _plan()
    journal.create(p, clock.now())
    runner = Runner(journal, clock, CONFIG)
    while len(journal.load(p.txn_id).measurements) < 3:  # the third shows the crash
        advanced = runner.step(p.txn_id, world)
        clock.sleep(advanced.wait_s)
    # A new process: a new runner and a new world, the journal the only memory.
    restarted = World(clock, sync_never=True, signals=world.signals)
    restarted.prs, restarted.deployed = world.prs, world.deployed
    state = settle(journal, p.txn_id, restarted, clock, CONFIG)
    undo = next(r for r in state.records if r.phase is Phase.UNDOING)
    assert undo.at == 1030 and state.reason.startswith("failed fast")


def test_a_window_resumed_after_a_restart_takes_only_the_measurements_left(
    tmp_path: Path,
) -> None:
    clock = FakeClock(1000.0)
    journal = Journal(tmp_path / "j.sqlite")
    p = plan()
    journal.create(p, clock.now())
    first = World(clock, sync_delay_s=0, window_count=6)
    runner = Runner(journal, clock, CONFIG)
    while len(journal.load(p.txn_id).measured(Stage.WINDOW, "merge-1")) < 2:
        clock.sleep(runner.step(p.txn_id, first).wait_s)
    # Killed here; the restart (another world, another runner) continues the window.
    second = World(clock, sync_delay_s=0, window_count=6)
    second.prs, second.deployed = first.prs, first.deployed
    state = settle(journal, p.txn_id, second, clock, CONFIG)
    assert state.outcome is Outcome.COMMITTED
    window = state.measured(Stage.WINDOW, "merge-1")
    assert [m.at - window[0].at for m in window] == [0, 10, 20, 30, 40, 50], "the window, once"
    assert second.calls.count("measure:window:merge-1") == 4, "only what was left was measured"
    outcomes = [r for r in state.records if r.phase is Phase.COMMITTED]
    assert [bool(r.data.get("announced")) for r in outcomes] == [False, True], "recorded once"


class _Oracle:
    """An oracle that reads what it is told; a verifier is rebuilt around it as after a restart."""

    def __init__(self, worse: list[list[str]]) -> None:
        self.name = "detectors"
        self.worse = worse
        self.spec = MetricSpec(
            interval=10, count=3, failure_limit=1, failure_condition=lambda r: bool(r["worse"])
        )

    def measure(self) -> Reading:
        return Reading({"worse": self.worse.pop(0)})


def test_the_verifier_judges_recorded_measurements_alone(tmp_path: Path) -> None:
    clock = FakeClock(0.0)
    oracle = _Oracle([[], ["critical finding x firing"]])
    taken = []
    for _ in range(2):
        verifier = OracleVerifier(lambda: [oracle], clock, lambda: [])
        answer = verifier.window(plan(), taken)
        assert answer.verdict is None and answer.next_at == (taken[-1].at + 10 if taken else 0)
        taken.append(verifier.measure("merge-1", Stage.WINDOW))
        clock.sleep(10)
    assert [m.marks for m in taken] == [
        (OracleMark("detectors", "Successful"),),
        (OracleMark("detectors", "Failed", ("critical finding x firing",)),),
    ]
    # The third measurement is recorded as taken by an earlier process: judged, not re-measured.
    third = Measurement(20.0, Stage.WINDOW, "merge-1", marks=(OracleMark("detectors", "Failed"),))
    verdict = OracleVerifier(lambda: [oracle], clock, lambda: []).window(plan(), [*taken, third])
    assert verdict.verdict is not None and verdict.verdict.phase.value == "failed"
    assert "detectors failed: 2 failed measurements (limit 1)" in verdict.verdict.findings
    assert verdict.verdict.summary == "oracles Failed after 20s, mu 0"


CRASH_FINDING = Finding(
    "pod-crashloop",
    "crashloop",
    Severity.CRITICAL,
    Resource("Deployment", "shop", "catalog"),
    "container server is crash-looping",
).to_json()


def _reverted(tmp_path: Path, linger_until: float) -> TxnState:
    """A candidate that crash-loops from 20 s after its merge (undone at 30 s); the crash
    loop still fires until ``linger_until``, after the revert deployed (30 s after it)."""
    clock = FakeClock(1000.0)

    def new(now: float) -> list[dict[str, Any]]:
        return [CRASH_FINDING] if 1020 <= now < linger_until else []

    def crashing(now: float) -> tuple[Signal, ...]:
        return (CRASH,) if now >= 1020 else ()

    world = World(clock, sync_never=True, signals=crashing, new_findings=new)
    journal = Journal(tmp_path / "j.sqlite")
    p = _plan()
    journal.create(p, clock.now())
    return settle(journal, p.txn_id, world, clock, CONFIG)


def _revert_synced_after_revert(state: TxnState) -> float:
    reverted = next(r for r in state.records if r.phase is Phase.REVERTED)
    synced = next(r for r in state.records if r.phase is Phase.REVERT_SYNCED)
    return synced.at - reverted.at


def test_a_revert_is_synced_only_once_what_the_candidate_caused_has_gone(
    tmp_path: Path,
) -> None:
    """The engine applied the revert 30 s after its merge, but the candidate's crash-looping
    pods are scaled down later (a controller's next sync): the restore is judged, and the
    retry checkpointed, on the cluster after they went, not on them."""
    state = _reverted(tmp_path, linger_until=1120)
    assert state.outcome is Outcome.REVERTED
    assert [f["detector"] for f in state.caused] == ["pod-crashloop"]
    reverted = next(r for r in state.records if r.phase is Phase.REVERTED)
    synced = next(r for r in state.records if r.phase is Phase.REVERT_SYNCED)
    assert synced.at >= 1120 > reverted.at + 30, "waited past the engine's sync for the pods"
    assert synced.at - 1120 <= CONFIG.poll_s, "and no longer than one poll after they went"


def test_a_revert_whose_candidate_s_damage_never_goes_is_judged_at_the_sync_timeout(
    tmp_path: Path,
) -> None:
    state = _reverted(tmp_path, linger_until=float("inf"))
    assert _revert_synced_after_revert(state) == CONFIG.sync_timeout_s
    assert state.outcome is Outcome.REVERTED  # the fake's restore window: mu back


def test_a_revert_of_a_candidate_that_caused_nothing_is_synced_when_applied(
    tmp_path: Path,
) -> None:
    state = _reverted(tmp_path, linger_until=0.0)
    assert state.caused == ()
    assert _revert_synced_after_revert(state) == 30, "the fake engine's sync delay"
