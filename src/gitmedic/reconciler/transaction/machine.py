r"""The transaction state machine: one step per call, STRATUS's non-regression via PRs.

    planned -> pr-opened -> gated -> [awaiting-approval] -> merged -> synced -> committed
                               \-> rejected                    \         \-> held (inconclusive)
                                                                 \-> undoing -> revert-opened
                                  -> reverted -> revert-synced -> restored | held (alarm)

``advance`` looks at the folded state, performs exactly one action through the
ports, and returns the record to append (or none, with how long to wait before
polling again). It never sleeps: waiting is the caller's, on its clock, which is
why every timeout here is exact under a fake clock.

The sync wait ends when the engine applied the merged commit: Deployed (applied
and the whole app Healthy), or applied (the operation succeeded at that SHA) with
none of the objects the candidate changed still rolling out. It fails on an
apply error, or when the commit is not applied, or its own objects have not
rolled out, within the sync timeout: a rollout the candidate started that never
completes (a probe on a port nobody serves) keeps the old pods serving, which no
window reading can tell from a fix, so it is undone here. Whether the app is any
better is never the sync wait's question: an app the fix leaves unhealthy for
another reason (a second fault of the same commit) is never Deployed, and
waiting for that undid correct partial fixes.
Health and mu against the checkpoint are the window's verdict
(:func:`~gitmedic.reconciler.transaction.verdict.judge`).

The sync wait and the verification window are journaled measurements
(:mod:`~gitmedic.reconciler.transaction.window`), one per step: each poll of the
sync wait records the critical signals firing, each step of the window one
measurement of every oracle, when it is due. A restarted process continues the
window from the measurements recorded, and judges it from the plan's checkpoint
and those measurements. Before each measurement :func:`fail_fast` may end the
wait: what the candidate caused, for more than ``failure_limit`` measurements in
a row, undoes it at once.

A revert counts as synced once the engine applied it and what the undone
candidate caused has gone (or the sync timeout passed): a controller scales the
candidate's pods down later than the engine applies, and a restore judged, or a
retry checkpointed, on those pods is judged on the candidate, not on the revert.

Undo is always allowed and never gated: a failed verification, a sync that
fails or never finishes, all lead to a revert PR, merged at once unless the
plan says the team approves reverts too (``policy.revert_regressions:
approval``: the revert waits in awaiting-approval). If even the revert cannot
be deployed or does not restore mu, the machine holds with an alarm for a human
rather than loop. Whether to keep, undo or hold is
:func:`~gitmedic.reconciler.transaction.verdict.judge`'s answer, the one verdict.

A merge the forge refuses (a required check, branch protection, a conflict
that re-gating did not cure) never ends the transaction: the PR waits in
awaiting-approval with the reason, told on the PR, and each poll tries again.

A terminal phase is followed by one more step, announcing: the outcome comment
on the PR, the writer lock's label taken off, the dashboard updated
(``ports.announce``, idempotent), then a record that says so. Only then is the
transaction settled, so a process killed between the outcome and its telling
tells it after the restart, once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmedic.reconciler.transaction.model import Phase, Record, TxnState
from gitmedic.reconciler.transaction.ports import (
    MergeRefused,
    Ports,
    PrState,
    SyncPhase,
)
from gitmedic.reconciler.transaction.signals import caused_key
from gitmedic.reconciler.transaction.verdict import (
    Decision,
    changed_objects,
    fail_fast,
    judge,
    judge_restore,
)
from gitmedic.reconciler.transaction.window import Measurement, Stage


@dataclass(frozen=True)
class MachineConfig:
    sync_timeout_s: float = 600.0
    poll_s: float = 10.0
    approval_poll_s: float = 60.0
    max_regates: int = 2
    # Measurements showing a critical signal the candidate caused tolerated in a row, in the
    # sync wait and the window (``oracles.failure_limit``); one more undoes it at once.
    failure_limit: int = 1

    def __post_init__(self) -> None:
        if self.failure_limit < 0:
            raise ValueError(f"failure_limit must be 0 or more, got {self.failure_limit}")
        # A poll of 0 would ask the engine again within the same instant, forever; a
        # negative sync timeout means nothing, refused rather than read as 0.
        if self.poll_s <= 0 or self.sync_timeout_s < 0:
            raise ValueError(
                f"need poll_s > 0 and sync_timeout_s >= 0, got {self.poll_s} and "
                f"{self.sync_timeout_s}"
            )


@dataclass(frozen=True)
class Step:
    record: Record | None
    wait_s: float = 0.0


Handler = Callable[[TxnState, Ports, float, MachineConfig], Step]


def advance(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    if state.settled:
        return Step(None)
    if state.phase.terminal:
        return _announce(state, ports, now)
    return _HANDLERS[state.phase](state, ports, now, config)


def _announce(state: TxnState, ports: Ports, now: float) -> Step:
    ports.announce(state, outcome_message(state))
    return _record(state, state.phase, now, announced=True)


def outcome_message(state: TxnState) -> str:
    """The comment a transaction leaves on its PR when it ends."""
    plan = state.plan
    what = f"attempt {plan.attempt}" if plan.attempt else f"{plan.strategy} PR"
    lines = [f"**gitmedic**: {what} of incident `{plan.incident}` ended **{state.outcome.value}**."]
    if state.reason:
        lines.append(f"Reason: {state.reason}")
    if state.mu_post is not None:
        lines.append(f"Severity before {plan.mu_pre:g}, after {state.mu_post:g}.")
    if state.revert_pr is not None:
        lines.append(f"Reverted by #{state.revert_pr}.")
    lines += [f"- {line}" for line in state.feedback]
    return "\n".join(lines)


def _record(state: TxnState, phase: Phase, now: float, **data: Any) -> Step:
    return Step(Record(len(state.records) + 1, phase, now, data))


def _open_pr(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    opened = ports.open_pr(state.plan)
    return _record(state, Phase.PR_OPENED, now, pr=opened.number, head_sha=opened.head_sha)


def _gate(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    assert state.pr is not None
    closed = _closed_by_human(state, ports, now)
    if closed:
        return closed
    result = ports.gate(state.plan, state.pr)
    if not result.ok:
        return _record(state, Phase.REJECTED, now, reason=f"gate failed: {result.summary}")
    return _record(state, Phase.GATED, now, head_sha=result.head_sha, gated_base=result.base_sha)


def _merge(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    assert state.pr is not None
    closed = _closed_by_human(state, ports, now)
    if closed:
        return closed
    # A human merging the PR is the strongest approval there is.
    human_merged = ports.pr_state(state.pr) is PrState.MERGED
    # A person's hold stops even a merge the policy allowed: it is read here, at the
    # last step before the merge, so a hold given mid-transaction still takes effect.
    if not human_merged and ports.held(state.pr):
        return _wait_for_person(state, now, config, "held by a person")
    if not (state.plan.auto_merge or human_merged or ports.approved(state.pr)):
        return _wait_for_person(state, now, config, "waiting for approval")
    # Merged already (by a person, or by us just before a kill): main moved by that very
    # merge, and merging again returns its merge commit.
    moved = not human_merged and state.gated_base and ports.main_head() != state.gated_base
    try:
        if moved:  # main moved under the PR: rebase it and gate again before merging
            raise MergeRefused(f"main moved from {state.gated_base[:12]}", retryable=True)
        merge_sha = ports.merge(state.pr, state.head_sha)
    except MergeRefused as exc:
        if not exc.retryable or state.regates >= config.max_regates:
            return _refused(state, ports, now, config, f"merge refused: {exc}")
        refreshed = ports.refresh_branch(state.plan, state.pr)
        return _record(
            state,
            Phase.PR_OPENED,
            now,
            head_sha=refreshed.head_sha,
            regates=state.regates + 1,
            reason=f"re-gate: {exc}",
        )
    return _record(state, Phase.MERGED, now, merge_sha=merge_sha, merged_at=now, reason="")


def _refused(state: TxnState, ports: Ports, now: float, config: MachineConfig, why: str) -> Step:
    """The forge will not merge (a required check, branch protection, a conflict): the PR
    waits, and says why on it; each approval poll tries the merge again."""
    assert state.pr is not None
    if state.phase is Phase.AWAITING_APPROVAL and state.reason == why:
        return Step(None, config.approval_poll_s)
    ports.announce(state, refusal_message(state.pr, why))
    return _record(state, Phase.AWAITING_APPROVAL, now, reason=why)


def refusal_message(pr: int, why: str) -> str:
    return (
        f"**gitmedic** could not merge #{pr}: {why}.\n\nThe PR waits: gitmedic tries the "
        "merge again at each look, so clearing what blocks it (a required check, branch "
        "protection, a conflict) lets it proceed. `/gitmedic merge` tries at once; "
        "`/gitmedic retry` closes it for a new attempt."
    )


def _wait_for_person(state: TxnState, now: float, config: MachineConfig, why: str) -> Step:
    if state.phase is Phase.GATED:
        return _record(state, Phase.AWAITING_APPROVAL, now, reason=why)
    return Step(None, config.approval_poll_s)


def _await_sync(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    """Wait until the engine applied the merge (see the module docstring): deployed, or
    applied with the candidate's own objects rolled out; an apply error or an apply that
    never comes undoes it. Whether the app is better is the window's verdict, not this."""
    status = ports.sync_status(state.merge_sha)
    assert state.merged_at is not None
    if status.phase is SyncPhase.DEPLOYED:
        return _record(state, Phase.SYNCED, now)
    if status.phase is SyncPhase.FAILED:
        return _undo(state, ports, now, f"sync of {state.merge_sha[:12]} failed: {status.message}")
    rolling = changed_objects(state.plan) & set(status.progressing)
    if status.applied and not rolling:
        return _record(state, Phase.SYNCED, now)
    taken = state.measured(Stage.SYNC, state.merge_sha)
    failed = fail_fast(state.plan, taken, config.failure_limit)
    if failed is not None:  # what the last measurement saw: the revert PR says it
        return _undo(state, ports, now, failed.reason, **_seen(taken[-1]))
    waited = now - state.merged_at
    if waited >= config.sync_timeout_s:
        return _undo(
            state,
            ports,
            now,
            f"{state.merge_sha[:12]} not deployed after {config.sync_timeout_s:g}s",
        )
    due = taken[-1].at + config.poll_s if taken else now
    if now >= due:  # one measurement per poll: what the deploying change breaks, journaled
        return _measured(state, ports.measure(state.plan, state.merge_sha, Stage.SYNC), now)
    return Step(None, min(due - now, config.sync_timeout_s - waited))


def _verify(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    taken = state.measured(Stage.WINDOW, state.merge_sha)
    failed = fail_fast(state.plan, taken, config.failure_limit)
    if failed is not None:
        return _undo(state, ports, now, failed.reason, **_seen(taken[-1]))
    answer = ports.window(state.plan, state.merge_sha, taken)
    if answer.verdict is None:
        return _measure_window(state, ports, now, answer.next_at, state.merge_sha)
    verdict = answer.verdict
    data: dict[str, Any] = {
        "mu_post": verdict.mu,
        "feedback": verdict.findings,
        "verdict_summary": verdict.summary,
    }
    judgement = judge(state.plan.mu_pre, verdict)
    if judgement.decision is Decision.HOLD:
        return _record(state, Phase.HELD, now, reason=judgement.reason, **data)
    if judgement.decision is Decision.KEEP:
        return _record(state, Phase.COMMITTED, now, reason=judgement.reason, **data)
    return _undo(state, ports, now, judgement.reason, **data)


def _measure_window(state: TxnState, ports: Ports, now: float, due: float, sha: str) -> Step:
    """The window's next measurement when it is due (one per step), else the wait for it."""
    if now < due:
        return Step(None, due - now)
    return _measured(state, ports.measure(state.plan, sha, Stage.WINDOW), now)


def _measured(state: TxnState, measurement: Measurement, now: float) -> Step:
    return _record(state, state.phase, now, measurement=measurement.to_json())


def _seen(measurement: Measurement) -> dict[str, Any]:
    return {"mu_post": measurement.mu, "feedback": list(measurement.seen)}


def _undo(state: TxnState, ports: Ports, now: float, reason: str, **data: Any) -> Step:
    # What the change caused is seen now, while it runs: the revert takes it away.
    caused = list(ports.caused(state.plan))
    return _record(state, Phase.UNDOING, now, reason=reason, caused=caused, **data)


def _open_revert(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    assert state.pr is not None
    opened = ports.open_revert(state)
    return _record(
        state, Phase.REVERT_OPENED, now, revert_pr=opened.number, revert_head_sha=opened.head_sha
    )


def _merge_revert(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    assert state.revert_pr is not None
    if not state.plan.revert_auto_merge and not ports.approved(state.revert_pr):
        # policy.revert_regressions: approval. The wait is AWAITING_APPROVAL, so every
        # driver stops there as for a fix; the revert PR being set tells the two apart.
        if state.phase is Phase.REVERT_OPENED:
            why = f"the revert PR #{state.revert_pr} waits for approval (revert_regressions)"
            return _record(state, Phase.AWAITING_APPROVAL, now, reason=why)
        return Step(None, config.approval_poll_s)
    try:
        sha = ports.merge(state.revert_pr, state.revert_head_sha)
    except MergeRefused as exc:
        return _alarm(state, now, f"the revert PR #{state.revert_pr} cannot be merged: {exc}")
    return _record(state, Phase.REVERTED, now, revert_merge_sha=sha, reverted_at=now)


def _await_revert_sync(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    """The revert is synced once the engine applied it and what the undone candidate caused
    has gone (within the sync timeout): the engine applying the revert is not the cluster
    back. A Deployment controller scales the candidate's crash-looping ReplicaSet down on a
    later sync, and within maxSurge the revert's own pods wait for that; a restore judged
    before then is judged on the candidate's pods, and the retry is checkpointed on them."""
    status = ports.sync_status(state.revert_merge_sha)
    assert state.reverted_at is not None
    waited = now - state.reverted_at
    if status.phase is SyncPhase.DEPLOYED or status.applied:
        if waited >= config.sync_timeout_s or not _lingering(state, ports):
            return _record(state, Phase.REVERT_SYNCED, now)
        return Step(None, min(config.poll_s, config.sync_timeout_s - waited))
    if status.phase is SyncPhase.FAILED or waited >= config.sync_timeout_s:
        detail = status.message if status.phase is SyncPhase.FAILED else "timed out"
        return _alarm(
            state, now, f"the revert {state.revert_merge_sha[:12]} did not deploy: {detail}"
        )
    return Step(None, min(config.poll_s, config.sync_timeout_s - waited))


def _lingering(state: TxnState, ports: Ports) -> bool:
    """Does a finding the undone candidate caused still fire (new since the checkpoint)?"""
    caused = {caused_key(f) for f in state.caused}
    return bool(caused) and any(caused_key(f) in caused for f in ports.caused(state.plan))


def _verify_restored(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    sha = state.revert_merge_sha
    answer = ports.window(state.plan, sha, state.measured(Stage.WINDOW, sha))
    if answer.verdict is None:
        return _measure_window(state, ports, now, answer.next_at, sha)
    judgement = judge_restore(state.plan.mu_pre, answer.verdict)
    if judgement.decision is Decision.KEEP:
        # The reason and feedback of the failed attempt stay: they drive the retry.
        return _record(state, Phase.RESTORED, now, mu_post=answer.verdict.mu)
    return _alarm(state, now, judgement.reason)


def _alarm(state: TxnState, now: float, reason: str) -> Step:
    return _record(state, Phase.HELD, now, reason=reason, alarm=True)


def _closed_by_human(state: TxnState, ports: Ports, now: float) -> Step | None:
    assert state.pr is not None
    pr_state = ports.pr_state(state.pr)
    if pr_state is PrState.CLOSED:
        return _record(
            state,
            Phase.REJECTED,
            now,
            reason=f"PR #{state.pr} was closed by a human",
            closed_by_person=True,
        )
    if pr_state is PrState.MISSING:
        return _record(state, Phase.REJECTED, now, reason=f"PR #{state.pr} or its branch is gone")
    return None


def _approval(state: TxnState, ports: Ports, now: float, config: MachineConfig) -> Step:
    """Waiting for a person: to merge the fix, or (revert_regressions: approval) its revert."""
    if state.revert_pr is not None:
        return _merge_revert(state, ports, now, config)
    return _merge(state, ports, now, config)


_HANDLERS: dict[Phase, Handler] = {
    Phase.PLANNED: _open_pr,
    Phase.PR_OPENED: _gate,
    Phase.GATED: _merge,
    Phase.AWAITING_APPROVAL: _approval,
    Phase.MERGED: _await_sync,
    Phase.SYNCED: _verify,
    Phase.UNDOING: _open_revert,
    Phase.REVERT_OPENED: _merge_revert,
    Phase.REVERTED: _await_revert_sync,
    Phase.REVERT_SYNCED: _verify_restored,
}
