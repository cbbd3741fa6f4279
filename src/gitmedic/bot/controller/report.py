"""What the loop reports: its timeline events, and per incident the transactions it ran.

The timeline (``Event``) is what ``gitmedic run`` prints, ``serve`` logs and the
demo shows; ``IncidentReport`` is one incident's account (transactions, what an
undone candidate caused, an escalation, time to resolution, the memory PR), read
from the journal, and ``txn_json`` its JSON in DESIGN.md's ``gitmedic run --json``
shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmedic.bot.controller.incidents import incident_of
from gitmedic.bot.responder.incident import Incident
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.oracles import AnalysisPhase
from gitmedic.reconciler.transaction import IncidentRow, Outcome, Phase, TxnState
from gitmedic.reconciler.transaction.window import Measurement, Stage

if TYPE_CHECKING:
    from gitmedic.bot.controller.attempts import Attempts


@dataclass(frozen=True)
class Event:
    at: float
    # detected | detector-failed | incident | proposal | txn | escalated | memory | healthy
    kind: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class IncidentReport:
    incident: Incident
    transactions: list[TxnState] = field(default_factory=list)
    # txn id -> findings its candidate caused, seen live when the machine decided to undo it
    caused: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    escalated: str = ""
    resolved_at: float | None = None
    memory_pr: int | None = None

    @classmethod
    def of(
        cls,
        row: IncidentRow,
        attempts: Attempts,
        live: Incident | None,
        resolved_at: float | None,
    ) -> IncidentReport:
        return cls(
            live or incident_of(row),
            list(attempts.states),
            {s.plan.txn_id: attempts.caused(s) for s in attempts.states if s.caused},
            str(row.data.get("escalated", "")),
            resolved_at,
            attempts.memory.pr if attempts.memory is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.incident.id,
            "findings": [f.to_json() for f in self.incident.findings],
            "transactions": [txn_json(t) for t in self.transactions],
        }


def txn_json(t: TxnState) -> dict[str, Any]:
    status = "held" if t.phase is Phase.AWAITING_APPROVAL else t.outcome.value
    return {
        "pr": t.pr,
        "branch": t.plan.branch,
        "status": status,
        "attempt": t.plan.attempt,
        "strategy": t.plan.strategy,
        "tokens": t.plan.tokens,
        "mu_before": t.plan.mu_pre,
        "mu_after": t.mu_post,
    }


def describe(state: TxnState) -> str:
    pr = f"PR #{state.pr}" if state.pr else "PR"
    if "measurement" in state.records[-1].data:
        return describe_measurement(pr, state.measurements[-1])
    texts = {
        Phase.PR_OPENED: f"{pr} opened on {state.plan.branch}",
        Phase.GATED: f"{pr} gate green",
        Phase.AWAITING_APPROVAL: f"{pr} waits for a person's approval",
        Phase.MERGED: f"{pr} merged",
        Phase.SYNCED: f"{pr} deployed by the engine",
        Phase.COMMITTED: f"{pr} verified: committed (mu {state.mu_post})",
        Phase.UNDOING: f"{pr} regressed: {state.reason}",
        Phase.REVERT_OPENED: f"revert PR #{state.revert_pr} opened",
        Phase.REVERTED: f"revert PR #{state.revert_pr} merged",
        Phase.REVERT_SYNCED: "the revert is deployed",
        Phase.RESTORED: "restored: main is back where it was",
        Phase.REJECTED: f"{pr} rejected: {state.reason}",
        Phase.HELD: f"{pr} held: {state.reason}",
    }
    return texts.get(state.phase, state.phase.value)


def describe_measurement(pr: str, taken: Measurement) -> str:
    """One journaled measurement of the sync wait or the window, for the timeline."""
    signals = f"{len(taken.signals)} critical signal(s)"
    if taken.stage is Stage.SYNC:
        return f"{pr} deploying {taken.sha[:12]}: {signals}"
    failed = sum(1 for m in taken.marks if m.phase == AnalysisPhase.FAILED.value)
    return (
        f"{pr} window measurement of {taken.sha[:12]}: mu {taken.mu:g}, "
        f"{failed} oracle(s) worse, {signals}"
    )


def finished_unfixed(report: IncidentReport) -> bool:
    return bool(report.transactions) and report.transactions[-1].outcome is not Outcome.COMMITTED
