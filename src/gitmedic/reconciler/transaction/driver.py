"""Driving a transaction to a terminal phase: load, advance one step, persist, repeat.

Every record is persisted before the next action starts, so a process killed at
any point resumes from the journal and repeats at most the one action whose
record it had not yet written (the ports make that repetition harmless).
"""

from __future__ import annotations

from collections.abc import Callable

from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.transaction.journal import Journal
from gitmedic.reconciler.transaction.machine import MachineConfig, advance
from gitmedic.reconciler.transaction.model import TxnState
from gitmedic.reconciler.transaction.ports import Ports


def outcome_message(state: TxnState) -> str:
    """The comment a transaction leaves on its PR when it ends."""
    plan = state.plan
    lines = [
        f"**gitmedic**: attempt {plan.attempt} of incident `{plan.incident}` "
        f"ended **{state.outcome.value}**."
    ]
    if state.reason:
        lines.append(f"Reason: {state.reason}")
    if state.mu_post is not None:
        lines.append(f"Severity before {plan.mu_pre:g}, after {state.mu_post:g}.")
    if state.revert_pr is not None:
        lines.append(f"Reverted by #{state.revert_pr}.")
    lines += [f"- {line}" for line in state.feedback]
    return "\n".join(lines)


class StepLimitExceeded(RuntimeError):
    pass


def step(
    journal: Journal, txn_id: str, ports: Ports, clock: Clock, config: MachineConfig
) -> tuple[TxnState, float]:
    """Advance one step; returns the new state and how long to wait before the next."""
    state = journal.load(txn_id)
    result = advance(state, ports, clock.now(), config)
    if result.record is None:
        return state, result.wait_s
    journal.append(txn_id, result.record)
    return state.apply(result.record), 0.0


def drive(
    journal: Journal,
    txn_id: str,
    ports: Ports,
    clock: Clock,
    config: MachineConfig | None = None,
    *,
    max_steps: int = 10_000,
    on_record: Callable[[TxnState], None] = lambda state: None,
) -> TxnState:
    """Step until a terminal phase; ``on_record`` sees the state after each persisted record."""
    config = config or MachineConfig()
    state = journal.load(txn_id)
    for _ in range(max_steps):
        if state.phase.terminal:
            return state
        before = len(state.records)
        state, wait = step(journal, txn_id, ports, clock, config)
        if len(state.records) > before:
            on_record(state)
            if state.phase.terminal:  # tell people; idempotent, so a resumed run may repeat it
                ports.announce(state, outcome_message(state))
        if wait > 0:
            clock.sleep(wait)
    raise StepLimitExceeded(f"{txn_id} did not finish within {max_steps} steps")
