"""The one verdict: keep, undo or hold from the checkpoint's mu and the window's reading."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.transaction import Verdict, VerdictPhase
from gitmedic.reconciler.transaction.verdict import Decision, judge, judge_restore

OK = VerdictPhase.SUCCESSFUL


@pytest.mark.parametrize(
    ("verdict", "decision", "reason"),
    [
        (Verdict(OK, 0.0, True, "fine"), Decision.KEEP, "fine"),
        (Verdict(OK, 10.0, True, "fine"), Decision.KEEP, "fine"),
        (Verdict(OK, 15.0, True, "x"), Decision.UNDO, "verification failed: mu rose from 10 to 15"),
        (Verdict(OK, 0.0, False, "x"), Decision.UNDO, "target findings still firing"),
        (Verdict(OK, 4.0, False, "x", cleared=("a",)), Decision.KEEP, "partly fixed: 1 target"),
        (Verdict(OK, 15.0, False, "x", cleared=("a",)), Decision.UNDO, "mu rose from 10 to 15"),
        (
            Verdict(VerdictPhase.FAILED, 4.0, False, "alerts failed", cleared=("a",)),
            Decision.UNDO,
            "alerts failed",
        ),
        (Verdict(VerdictPhase.FAILED, 0.0, True, "alerts failed"), Decision.UNDO, "alerts failed"),
        (Verdict(VerdictPhase.ERROR, 0.0, True, "no alerts"), Decision.HOLD, "no alerts"),
        (Verdict(VerdictPhase.INCONCLUSIVE, 50.0, False, "?"), Decision.HOLD, "inconclusive"),
        (Verdict(OK, 50.0, False, "x", interfered=True), Decision.HOLD, "another change"),
    ],
)
def test_judge(verdict: Verdict, decision: Decision, reason: str) -> None:
    judged = judge(10.0, verdict)
    assert judged.decision is decision and reason in judged.reason


def test_a_revert_restores_when_mu_is_back_at_the_checkpoint() -> None:
    assert judge_restore(10.0, Verdict(OK, 10.0, False, "ok")).decision is Decision.KEEP
    held = judge_restore(10.0, Verdict(OK, 12.0, True, "ok"))
    assert held.decision is Decision.HOLD and "above 10" in held.reason
    assert (
        judge_restore(10.0, Verdict(VerdictPhase.ERROR, 0.0, True, "x")).decision is Decision.HOLD
    )
