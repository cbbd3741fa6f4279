"""Transaction data: the plan, the journal records, and the state folded from them.

One transaction is one attempt at one change: one pull request, merged at most
once, reverted at most once. The journal is append-only; the state is never
stored, only folded from the records, so a restarted process that reads the
journal is exactly where the crashed one was after its last completed step.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from gitmedic.reconciler.transaction.window import Measurement, Stage, of_stage


class Phase(enum.Enum):
    PLANNED = "planned"
    PR_OPENED = "pr-opened"
    GATED = "gated"
    AWAITING_APPROVAL = "awaiting-approval"
    MERGED = "merged"
    SYNCED = "synced"
    COMMITTED = "committed"
    UNDOING = "undoing"
    REVERT_OPENED = "revert-opened"
    REVERTED = "reverted"
    REVERT_SYNCED = "revert-synced"
    RESTORED = "restored"
    REJECTED = "rejected"
    HELD = "held"

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset({Phase.COMMITTED, Phase.RESTORED, Phase.REJECTED, Phase.HELD})


class Outcome(enum.Enum):
    """The DESIGN.md contract's transaction status."""

    COMMITTED = "committed"
    REVERTED = "reverted"
    REJECTED = "rejected"
    HELD = "held"
    FAILED = "failed"
    IN_FLIGHT = "in-flight"


@dataclass(frozen=True)
class Plan:
    """What the transaction will change and what it must achieve."""

    txn_id: str
    app: str
    incident: str
    attempt: int
    strategy: str  # playbook | bisect | llm | revert
    branch: str
    title: str
    edits: tuple[Mapping[str, Any], ...]  # JSON form of manifest edits
    base_sha: str
    mu_pre: float
    targets: tuple[str, ...]  # fingerprints of the findings the change must clear
    auto_merge: bool  # the policy's decision, an input here
    snapshot_digest: str = ""
    body: str = ""
    feedback: tuple[str, ...] = ()
    tokens: int = 0
    # What each oracle saw at the checkpoint (its description -> problems, None when it
    # could not see): the window compares with this, also after a restart.
    baselines: Mapping[str, Mapping[str, int] | None] = field(default_factory=dict)
    # What fired at the checkpoint (detector and object, ``signals.firing_key``), and the
    # incident's own findings (a fix cannot cause its fault): what fires once the change is
    # deployed and not here, the change caused (fail fast; the retry's extension).
    firing: tuple[str, ...] = ()
    playbook: str = ""  # the playbook the change came from (a failed one is set aside)
    proposal: Mapping[str, Any] = field(default_factory=dict)  # the proposal's JSON
    # policy.revert_regressions: False when a person approves the revert of this change.
    revert_auto_merge: bool = True

    def to_json(self) -> dict[str, Any]:
        """Every field in declaration order, its containers as JSON lists and objects."""
        return {f.name: _json_field(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        return cls(
            **{
                **data,
                "edits": tuple(data["edits"]),
                "targets": tuple(data["targets"]),
                "feedback": tuple(data.get("feedback", ())),
                "firing": tuple(data.get("firing", ())),
            }
        )


@dataclass(frozen=True)
class Record:
    """One journal entry: the phase entered, when, and what was learned on the way."""

    seq: int
    phase: Phase
    at: float
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TxnState:
    plan: Plan
    phase: Phase = Phase.PLANNED
    pr: int | None = None
    head_sha: str = ""
    gated_base: str = ""
    merge_sha: str = ""
    merged_at: float | None = None
    revert_pr: int | None = None
    revert_head_sha: str = ""
    revert_merge_sha: str = ""
    reverted_at: float | None = None
    mu_post: float | None = None
    reason: str = ""
    # The window's verdict as its oracles told it (each oracle's phase), beside the judge's
    # reason: what a revert's evidence quotes.
    verdict_summary: str = ""
    feedback: tuple[str, ...] = ()
    regates: int = 0
    alarm: bool = False
    caused: tuple[Mapping[str, Any], ...] = ()  # findings (JSON) the deployed change caused
    announced: bool = False  # the outcome was told (comment, lock label, dashboard)
    closed_by_person: bool = False  # rejected because a person closed the PR
    # The sync waits' and windows' measurements, each journaled by the step that took it.
    measurements: tuple[Measurement, ...] = ()
    records: tuple[Record, ...] = ()

    def measured(self, stage: Stage, sha: str) -> tuple[Measurement, ...]:
        """The recorded measurements of one stage of one revision (the fix's or the revert's)."""
        return of_stage(self.measurements, stage, sha)

    @property
    def settled(self) -> bool:
        """Terminal and told: nothing is left for the runner to do."""
        return self.phase.terminal and self.announced

    @property
    def outcome(self) -> Outcome:
        if self.phase is Phase.COMMITTED:
            return Outcome.COMMITTED
        if self.phase is Phase.RESTORED:
            return Outcome.REVERTED
        if self.phase is Phase.REJECTED:
            return Outcome.REJECTED
        if self.phase is Phase.HELD:
            return Outcome.FAILED if self.alarm else Outcome.HELD
        return Outcome.IN_FLIGHT

    def apply(self, record: Record) -> TxnState:
        """The state after ``record``: only the keys a record carries change."""
        known = {k: v for k, v in record.data.items() if k in _FOLDED}
        for key in ("feedback", "caused"):
            if key in known:
                known[key] = tuple(known[key])
        taken = record.data.get("measurement")
        if taken is not None:  # appended, never replaced: the window so far
            known["measurements"] = (*self.measurements, Measurement.from_json(taken))
        return replace(self, phase=record.phase, records=(*self.records, record), **known)

    @classmethod
    def fold(cls, plan: Plan, records: Iterable[Record]) -> TxnState:
        state = cls(plan)
        for r in records:
            state = state.apply(r)
        return state

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "branch": self.plan.branch,
            "status": self.outcome.value,
            "phase": self.phase.value,
            "attempt": self.plan.attempt,
            "strategy": self.plan.strategy,
            "tokens": self.plan.tokens,
            "mu_before": self.plan.mu_pre,
            "mu_after": self.mu_post,
            "reason": self.reason,
            "revert_pr": self.revert_pr,
        }


def _json_field(value: Any) -> Any:
    """A plan field as JSON data: tuples as lists, mappings (and those they hold) as dicts."""
    if isinstance(value, tuple):
        return [dict(v) if isinstance(v, Mapping) else v for v in value]
    if isinstance(value, Mapping):
        return {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
    return value


# What a record's data may set: every field but the plan, the phase (the record's own)
# and the two histories apply() appends to.
_UNFOLDED = frozenset({"plan", "phase", "measurements", "records"})
_FOLDED = frozenset(f.name for f in fields(TxnState)) - _UNFOLDED
