"""The attempt policy: what to do next for an incident, decided from the journal alone.

An incident's attempts are the transactions naming it (its memory PR aside),
so after a restart the budget, the feedback of the last undone attempt, the
playbooks that failed, the candidates already tried and what an undone one
caused (recorded when the machine decided to undo it) are what they were.
:func:`next_move` is pure over that history:

- an attempt not settled yet is resumed first (never a second PR for it);
- a committed attempt is remembered (its memory PR), then the incident is done;
- an attempt held for a person, failed with an alarm, or whose PR a person
  closed, stops the attempts (a person's retry goes on);
- with budget left after undone attempts (or none yet), propose attempt ``n``;
- with none left, escalate with every undone attempt's reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.responder.proposal import IntroducingCommit, Proposal
from gitmedic.bot.transactions.kinds import MEMORY as MEMORY  # the memory PR: not an attempt
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.transaction import Outcome, TxnState

UNDONE = (Outcome.REVERTED, Outcome.REJECTED)


@dataclass(frozen=True)
class Attempts:
    """An incident's attempts (in order) and its memory PR, from the journal."""

    states: tuple[TxnState, ...]
    budget: int
    memory: TxnState | None = None
    # A person's retry starts afresh: attempts up to this number neither set playbooks
    # aside nor count as tried, nor give feedback (the person saw them and asked again).
    since: int = 0

    @classmethod
    def of(cls, states: Sequence[TxnState], budget: int, since: int = 0) -> Attempts:
        attempts = tuple(s for s in states if s.plan.strategy != MEMORY)
        memory = next((s for s in states if s.plan.strategy == MEMORY), None)
        return cls(attempts, budget, memory, since)

    @property
    def next_number(self) -> int:
        return max((s.plan.attempt for s in self.states), default=0) + 1

    @property
    def undone(self) -> tuple[TxnState, ...]:
        """The undone attempts since the last retry a person asked for."""
        return tuple(s for s in self.states if s.outcome in UNDONE and s.plan.attempt > self.since)

    @property
    def last_undone(self) -> TxnState | None:
        last = self.states[-1] if self.states else None
        fresh = last is not None and last.plan.attempt > self.since
        return last if last is not None and fresh and last.outcome in UNDONE else None

    @property
    def committed(self) -> TxnState | None:
        return next((s for s in self.states if s.outcome is Outcome.COMMITTED), None)

    @property
    def failed_playbooks(self) -> frozenset[str]:
        return frozenset(s.plan.playbook for s in self.undone if s.plan.playbook)

    @property
    def tried(self) -> tuple[tuple[Mapping[str, Any], ...], ...]:
        return tuple(s.plan.edits for s in self.undone)

    @property
    def feedback(self) -> list[str]:
        """The last undone attempt's outcome and what the oracles saw: the retry's input."""
        last = self.last_undone
        if last is None:
            return []
        head = f"attempt {last.plan.attempt} ({last.plan.strategy}) {last.outcome.value}: "
        return [head + last.reason, *last.feedback]

    def caused(self, state: TxnState) -> tuple[Finding, ...]:
        return tuple(Finding.from_json(f) for f in state.caused)


@dataclass(frozen=True)
class Move:
    kind: str  # resume | remember | stop | propose | escalate | done
    state: TxnState | None = None  # resume / remember: the transaction
    attempt: int = 0  # propose
    why: str = ""  # escalate


def next_move(attempts: Attempts) -> Move:
    """What the incident needs next (see the module docstring)."""
    pending = [s for s in attempts.states if not s.settled]
    if pending:
        return Move("resume", pending[0])
    if attempts.memory is not None and not attempts.memory.settled:
        return Move("resume", attempts.memory)
    committed = attempts.committed
    if committed is not None:
        return Move("done") if attempts.memory is not None else Move("remember", committed)
    last = attempts.states[-1] if attempts.states else None
    closed = last is not None and last.closed_by_person and last.plan.attempt > attempts.since
    if last is not None and (last.outcome not in UNDONE or closed):
        # held for a person, failed with an alarm, or closed by a person: a person's
        # /gitmedic retry starts the next attempt, not the loop
        return Move("stop", last)
    if len(attempts.states) < attempts.budget:
        return Move("propose", attempt=attempts.next_number)
    reasons = "; ".join(f"attempt {s.plan.attempt}: {s.reason}" for s in attempts.undone)
    return Move(
        "escalate", why=f"all {len(attempts.states)} attempt(s) were undone ({reasons})"[:600]
    )


def proposal_of(state: TxnState) -> Proposal:
    """The proposal a transaction carried out, as its plan recorded it."""
    data = state.plan.proposal
    commit = data.get("commit")
    return Proposal(
        incident=state.plan.incident,
        strategy=data.get("strategy", state.plan.strategy),
        edits=tuple(Edit.from_json(e) for e in state.plan.edits),
        diagnosis=str(data.get("diagnosis", "")),
        evidence=tuple(data.get("evidence", ())),
        playbook=state.plan.playbook or None,
        commit=IntroducingCommit(**commit) if commit else None,
        fields=tuple(data.get("fields", ())),
        tokens=state.plan.tokens,
        cost_usd=float(data.get("cost_usd", 0.0)),
    )
