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
- keep: the oracles passed, mu did not rise, and the targets cleared; or some
  of them cleared (a partial fix: the window saw it worsen nothing, and the
  incident continues with what still fires; undoing it would bring back what
  it fixed, as retries did for a commit with two faults);
- undo: anything else, with the reason.

:func:`judge_restore` is the same question after an undo: the revert restored
the app when mu is back at (or under) the checkpoint's; otherwise a person must
look (the machine never loops on undo).

:func:`fail_fast` is asked before each measurement of the sync wait and of the
window, as Argo Rollouts ends an analysis at its failure limit: a critical
finding or alert that the candidate caused (absent at the checkpoint, on an
object the candidate changed or one that depends on it) seen in more than
``failure_limit`` consecutive measurements undoes the candidate at once,
rather than when the sync times out or the window ends.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.transaction.model import Plan
from gitmedic.reconciler.transaction.ports import Verdict, VerdictPhase
from gitmedic.reconciler.transaction.window import Measurement, Signal


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
    if not verdict.targets_cleared and not verdict.cleared:
        return Judgement(Decision.UNDO, "verification failed: target findings still firing")
    if verdict.phase is not VerdictPhase.SUCCESSFUL:
        return Judgement(Decision.UNDO, f"verification failed: {verdict.summary}")
    if not verdict.targets_cleared:
        return Judgement(
            Decision.KEEP,
            f"partly fixed: {len(verdict.cleared)} target finding(s) cleared, the rest still "
            f"firing, nothing worse ({verdict.summary})",
        )
    return Judgement(Decision.KEEP, verdict.summary)


def judge_restore(mu_pre: float, verdict: Verdict) -> Judgement:
    """After a revert deployed: KEEP when the app is back to its checkpoint, else HOLD."""
    if verdict.mu <= mu_pre and verdict.phase is not VerdictPhase.ERROR:
        return Judgement(Decision.KEEP, verdict.summary)
    return Judgement(
        Decision.HOLD, f"after the revert mu is {verdict.mu:g}, above {mu_pre:g} before the change"
    )


def fail_fast(
    plan: Plan, measurements: Sequence[Measurement], failure_limit: int
) -> Judgement | None:
    """UNDO when one signal the candidate caused fired in each of the last
    ``failure_limit + 1`` measurements (see the module docstring); else None.

    Judged from the plan's checkpoint and the recorded measurements alone, so a
    streak begun before a restart counts after it."""
    streak = failure_limit + 1
    if failure_limit < 0 or len(measurements) < streak:
        return None
    seen = [{s.key for s in m.signals if caused_signal(plan, s)} for m in measurements[-streak:]]
    persistent = sorted(set.intersection(*seen))
    if not persistent:
        return None
    first, last = measurements[-streak].at, measurements[-1].at
    return Judgement(
        Decision.UNDO,
        f"failed fast: {persistent[0]} (caused by the change, absent at the checkpoint) in "
        f"{streak} consecutive measurements over {last - first:g}s",
    )


def changed_objects(plan: Plan) -> set[str]:
    """The objects the plan's edits change, as signals name them."""
    found = set()
    for edit in plan.edits:
        resource = edit.get("resource")
        if isinstance(resource, dict):
            found.add(str(Resource.from_json(resource)))
    return found


def checkpoint_keys(plan: Plan) -> set[str]:
    """What fired at the checkpoint, as signals are keyed: findings by detector and object,
    and every problem an oracle's baseline saw (an alert by its problem line)."""
    keys = set(plan.firing)
    for problems in plan.baselines.values():
        keys.update(problems or {})
    return keys


def caused_signal(plan: Plan, signal: Signal) -> bool:
    """Is ``signal`` one the candidate caused: new since the checkpoint, on what it changed?"""
    return signal.key not in checkpoint_keys(plan) and bool(
        changed_objects(plan) & set(signal.objects)
    )
