"""The one verdict: keep, undo or hold a deployed change, from its checkpoint and the window.

Every path that judges a deployed change asks :func:`judge`: the machine after
the sync of a fix or a requested revert, and the watch of a person's merge. The
checkpoint is mu before the change (recorded in the plan, so a transaction
resumed after a restart is judged against it, not against a reading taken
after the merge); the window's :class:`~gitmedic.reconciler.transaction.ports.Verdict`
carries mu after (scored by :func:`gitmedic.reconciler.oracles.severity`, the one
mu), the oracles' phase, whether the targets cleared and whether someone else's
change landed meanwhile.

- hold: someone else's change landed in the window, or the oracles could not
  tell (Inconclusive, Error): no verdict about *this* change can be trusted;
- keep: the oracles passed, mu did not rise, and the targets cleared;
- undo: anything else, with the reason.

:func:`judge_restore` is the same question after an undo: the revert restored
the app when mu is back at (or under) the checkpoint's; otherwise a person must
look (the machine never loops on undo).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gitmedic.reconciler.transaction.ports import Verdict, VerdictPhase


class Decision(enum.Enum):
    KEEP = "keep"
    UNDO = "undo"
    HOLD = "hold"


@dataclass(frozen=True)
class Judgement:
    decision: Decision
    reason: str


def judge(mu_pre: float, verdict: Verdict) -> Judgement:
    """Keep, undo or hold the change the window watched (see the module docstring)."""
    if verdict.interfered:
        return Judgement(Decision.HOLD, "inconclusive: another change landed during verification")
    if verdict.phase in (VerdictPhase.INCONCLUSIVE, VerdictPhase.ERROR):
        return Judgement(Decision.HOLD, f"inconclusive: {verdict.summary}")
    if verdict.mu > mu_pre:
        return Judgement(
            Decision.UNDO, f"verification failed: mu rose from {mu_pre:g} to {verdict.mu:g}"
        )
    if not verdict.targets_cleared:
        return Judgement(Decision.UNDO, "verification failed: target findings still firing")
    if verdict.phase is not VerdictPhase.SUCCESSFUL:
        return Judgement(Decision.UNDO, f"verification failed: {verdict.summary}")
    return Judgement(Decision.KEEP, verdict.summary)


def judge_restore(mu_pre: float, verdict: Verdict) -> Judgement:
    """After a revert deployed: KEEP when the app is back to its checkpoint, else HOLD."""
    if verdict.mu <= mu_pre and verdict.phase is not VerdictPhase.ERROR:
        return Judgement(Decision.KEEP, verdict.summary)
    return Judgement(
        Decision.HOLD, f"after the revert mu is {verdict.mu:g}, above {mu_pre:g} before the change"
    )
