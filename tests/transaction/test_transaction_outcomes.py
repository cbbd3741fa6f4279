"""A transaction ends committed, reverted, rejected or held, for the right reason."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import (
    Journal,
    MachineConfig,
    MergeRefused,
    Outcome,
    Phase,
    Runner,
    TxnState,
    VerdictPhase,
)
from gitmedic.reconciler.transaction.window import Stage
from tests.support.stepping import settle
from tests.transaction.fakes import World, plan

CONFIG = MachineConfig(sync_timeout_s=300, poll_s=10, approval_poll_s=60)


def _step(journal: Journal, txn_id: str, world: World, clock: FakeClock) -> tuple[TxnState, float]:
    """One step of the one runner: the state after it and how long to wait."""
    advanced = Runner(journal, clock, CONFIG).step(txn_id, world)
    return advanced.state, advanced.wait_s


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


@pytest.fixture
def world(clock: FakeClock) -> World:
    return World(clock)


def run(tmp_path: Path, world: World, clock: FakeClock, **plan_args: object) -> TxnState:
    journal = Journal(tmp_path / "journal.sqlite")
    p = plan(**plan_args)  # type: ignore[arg-type]
    journal.create(p, clock.now())
    return settle(journal, p.txn_id, world, clock, CONFIG)


def test_a_correct_fix_is_committed(tmp_path: Path, world: World, clock: FakeClock) -> None:
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.COMMITTED
    phases = [Phase.PR_OPENED, Phase.GATED, Phase.MERGED, Phase.SYNCED, Phase.COMMITTED]
    # ... and one more record: the outcome told (comment, lock label), a step of its own
    moves = [r for r in state.records if "measurement" not in r.data]
    assert [r.phase for r in moves] == [*phases, Phase.COMMITTED]
    assert [bool(r.data.get("announced")) for r in moves] == [False] * 5 + [True]
    # Between them, journaled too: a measurement per sync poll (30 s at 10 s), then the window.
    assert [(m.stage, m.at - 1000.0) for m in state.measurements] == [
        (Stage.SYNC, 0.0),
        (Stage.SYNC, 10.0),
        (Stage.SYNC, 20.0),
        (Stage.WINDOW, 30.0),
    ]
    assert sum(c.startswith("announce:") for c in world.calls) == 1
    assert state.mu_post == 0.0
    assert world.calls.count("merge:1") == 1 and "open_revert" not in world.calls


def test_a_fix_that_makes_things_worse_is_reverted_and_restored(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.mu_after_fix = 25.0
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REVERTED
    assert state.reason == "verification failed: mu rose from 10 to 25"
    assert state.feedback == ("KubePodCrashLooping checkout",)
    assert world.calls.count("merge:2") == 1, "the revert PR is merged at once"
    assert "verify:merge-2" in world.calls, "the restore is verified"


def test_a_revert_to_a_still_unhealthy_app_counts_once_applied(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    # Before the change the app was unhealthy (the incident); the revert brings that back.
    world.mu_after_fix, world.revert_unhealthy = 25.0, True
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REVERTED, state.reason


def test_a_fix_that_changes_nothing_is_not_committed(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.mu_after_fix, world.fix_clears_targets = 10.0, False
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REVERTED
    assert state.reason == "verification failed: target findings still firing"


def test_a_sync_that_never_finishes_is_reverted_exactly_at_the_timeout(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.sync_never = True
    start = clock.now()
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REVERTED
    undo = next(r for r in state.records if r.phase is Phase.UNDOING)
    merged = next(r for r in state.records if r.phase is Phase.MERGED)
    assert undo.at - merged.at == 300
    assert state.reason == "merge-1 not deployed after 300s"
    assert merged.at == start


def test_a_failed_sync_is_reverted_at_once(tmp_path: Path, world: World, clock: FakeClock) -> None:
    world.sync_fails = True
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REVERTED
    assert state.reason == "sync of merge-1 failed: ComparisonError"


def test_a_red_gate_rejects_without_merging(tmp_path: Path, world: World, clock: FakeClock) -> None:
    world.gate_ok = False
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.REJECTED and state.reason == "gate failed: new finding"
    assert not any(c.startswith("merge") for c in world.calls)


def test_without_auto_merge_it_waits_for_approval(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.approved_after = clock.now() + 150
    state = run(tmp_path, world, clock, auto_merge=False)
    assert state.outcome is Outcome.COMMITTED
    assert Phase.AWAITING_APPROVAL in [r.phase for r in state.records]
    merged = next(r for r in state.records if r.phase is Phase.MERGED)
    assert merged.at == 1000 + 180, "polled every 60s until approved at +150"


def test_a_hold_stops_even_an_auto_merge_until_it_is_lifted(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.held_until = clock.now() + 100
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.COMMITTED
    waiting = next(r for r in state.records if r.phase is Phase.AWAITING_APPROVAL)
    assert waiting.data["reason"] == "held by a person"
    merged = next(r for r in state.records if r.phase is Phase.MERGED)
    assert merged.at == 1000 + 120, "polled every 60s until the hold was lifted at +100"


def test_a_pr_closed_by_a_human_is_rejected(tmp_path: Path, world: World, clock: FakeClock) -> None:
    world.closed_by_human = True
    state = run(tmp_path, world, clock, auto_merge=False)
    assert state.outcome is Outcome.REJECTED
    assert state.reason == "PR #1 was closed by a human"


def test_a_moved_head_is_regated_then_merged(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.merge_refusals = [MergeRefused("head moved", retryable=True)]
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.COMMITTED
    assert world.calls.count("gate") == 2 and "refresh" in world.calls


def test_main_moving_under_the_pr_rebases_and_regates_before_merging(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.main_moves = True
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.COMMITTED
    assert world.calls.count("gate") == 2 and world.calls.count("refresh") == 1
    regate = next(r for r in state.records if r.data.get("reason", "").startswith("re-gate"))
    assert regate.data["reason"] == "re-gate: main moved from base"
    assert state.gated_base == "base+1"


def test_merge_refusals_are_bounded_then_the_pr_waits_and_merges_once_accepted(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    """Re-gates are bounded; past the bound the PR waits (not rejected), told on it,
    and each approval poll tries the merge again until the forge accepts it."""
    world.merge_refusals = [MergeRefused("conflict", retryable=True) for _ in range(5)]
    state = run(tmp_path, world, clock)
    assert world.calls.count("refresh") == CONFIG.max_regates
    waits = [r for r in state.records if r.phase is Phase.AWAITING_APPROVAL]
    assert [r.data["reason"] for r in waits] == ["merge refused: conflict"], "recorded once"
    (told,) = [c for c in world.calls if c.startswith("announce:") and "could not merge" in c]
    assert "merge refused: conflict" in told and "The PR waits" in told
    assert state.outcome is Outcome.COMMITTED, "merged once the refusals stopped"
    assert world.calls.count("merge:1") == 6


def test_a_refused_merge_that_no_regate_helps_waits_with_its_reason(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.merge_refusals = [MergeRefused("required status check 'ci' is expected",
                                         retryable=False)]  # fmt: skip
    journal = Journal(tmp_path / "journal.sqlite")
    p = plan()
    journal.create(p, clock.now())
    for _ in range(3):  # open, gate, merge: refused
        state, _ = _step(journal, p.txn_id, world, clock)
    assert state.phase is Phase.AWAITING_APPROVAL and state.outcome is Outcome.IN_FLIGHT
    assert state.reason == "merge refused: required status check 'ci' is expected"
    assert "refresh" not in world.calls
    state = settle(journal, p.txn_id, world, clock, CONFIG)
    assert state.outcome is Outcome.COMMITTED
    phases = [r.phase for r in state.records]
    assert phases[2:4] == [Phase.AWAITING_APPROVAL, Phase.MERGED], "the wait tries again"
    assert world.calls.count("merge:1") == 2


def test_a_revert_waits_for_approval_when_the_policy_says_so(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    """policy.revert_regressions: approval: the revert PR is opened at once but merged
    only once approved; until then the transaction waits like a fix awaiting approval."""
    world.mu_after_fix = 25.0
    world.approved_after = 2000.0  # a person approves the revert PR then
    journal = Journal(tmp_path / "journal.sqlite")
    p = replace(plan(), revert_auto_merge=False)
    journal.create(p, clock.now())
    state = journal.load(p.txn_id)
    while state.phase is not Phase.AWAITING_APPROVAL:
        state, wait = _step(journal, p.txn_id, world, clock)
        clock.sleep(wait)
    assert state.revert_pr == 2 and "merge:2" not in world.calls
    assert state.reason == "the revert PR #2 waits for approval (revert_regressions)"
    state = settle(journal, p.txn_id, world, clock, CONFIG)
    assert state.outcome is Outcome.REVERTED
    reverted = next(r for r in state.records if r.phase is Phase.REVERTED)
    assert reverted.at >= 2000.0 and world.calls.count("merge:2") == 1


def test_a_revert_is_merged_at_once_by_default(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.mu_after_fix = 25.0
    state = run(tmp_path, world, clock)  # plan(): revert_auto_merge defaults to True
    assert state.outcome is Outcome.REVERTED
    assert Phase.AWAITING_APPROVAL not in [r.phase for r in state.records]
    opened = next(r for r in state.records if r.phase is Phase.REVERT_OPENED)
    reverted = next(r for r in state.records if r.phase is Phase.REVERTED)
    assert reverted.seq == opened.seq + 1, "merged at the step after it was opened"


def test_inconclusive_verification_holds_for_a_human(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.verdict_phase = VerdictPhase.ERROR
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.HELD
    assert state.reason == "inconclusive: oracles ran 120s"
    assert "open_revert" not in world.calls


def test_another_change_during_verification_holds(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.interfered = True
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.HELD
    assert state.reason == "inconclusive: another change landed during verification"


def test_a_revert_that_does_not_restore_raises_the_alarm(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.mu_after_fix, world.revert_restores = 25.0, False
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.FAILED and state.alarm
    assert state.reason == "after the revert mu is 15, above 10 before the change"


def _synced_after(state: TxnState) -> float:
    merged = next(r for r in state.records if r.phase is Phase.MERGED)
    return next(r for r in state.records if r.phase is Phase.SYNCED).at - merged.at


def test_a_fix_applied_while_another_fault_keeps_the_app_unhealthy_is_judged_by_its_window(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    # The engine applied the fix (its Service is no longer Progressing) but the app stays
    # unhealthy for a second fault: the sync ends at the apply, the window keeps the fix.
    world.fix_applied_unhealthy, world.fix_progressing = True, ("Deployment/shop/cart",)
    state = run(tmp_path, world, clock, resource=True)
    assert state.outcome is Outcome.COMMITTED, state.reason
    assert _synced_after(state) == 30
    assert not any(r.phase is Phase.UNDOING for r in state.records)


def test_the_sync_waits_for_the_rollout_of_what_the_candidate_changed(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    # Its own object still rolls out: the wait goes on, and a rollout of its own that has not
    # completed at the timeout is not deployed (old pods keep serving, so no window reading
    # tells a stuck rollout from a fix: tests/bot/test_verification_oracles.py).
    world.fix_applied_unhealthy, world.fix_progressing = True, ("Service/shop/catalog",)
    state = run(tmp_path, world, clock, resource=True)
    assert state.outcome is Outcome.REVERTED, state.reason
    assert "not deployed after" in state.reason


def test_a_partial_fix_that_worsens_nothing_is_kept(
    tmp_path: Path, world: World, clock: FakeClock
) -> None:
    world.fix_clears_targets, world.fix_clears_some, world.mu_after_fix = False, ("abc123",), 4.0
    state = run(tmp_path, world, clock)
    assert state.outcome is Outcome.COMMITTED
    assert state.reason.startswith("partly fixed: 1 target finding(s) cleared"), state.reason
    assert "open_revert" not in world.calls
