"""The transaction's seam to the world: forge, gate, GitOps engine and oracles.

The state machine knows nothing of GitHub, git or Argo CD; it calls these ports.
Each port must be idempotent for a given transaction (the machine may call it
again after a crash between the call and the journal write): ``open_pr`` finds
the PR by its deterministic branch, ``merge`` of an already-merged PR returns
its merge commit, ``open_revert`` finds an existing revert PR. ``measure`` only
reads: a measurement whose record a crash lost is simply taken again.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction.model import Plan, TxnState
from gitmedic.reconciler.transaction.window import Measurement, Stage

__all__ = [
    "GateResult",
    "MergeRefused",
    "OpenedPR",
    "Ports",
    "PrState",
    "SyncPhase",
    "SyncState",
    "Verdict",
    "VerdictPhase",
    "WindowAnswer",
]


class PrState(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"
    MISSING = "missing"  # the branch or PR is gone


@dataclass(frozen=True)
class OpenedPR:
    number: int
    head_sha: str


@dataclass(frozen=True)
class GateResult:
    ok: bool
    summary: str
    head_sha: str
    base_sha: str = ""  # the default branch's head the gate judged against


class VerdictPhase(enum.Enum):
    SUCCESSFUL = "successful"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"
    FAILED = "failed"


@dataclass(frozen=True)
class Verdict:
    phase: VerdictPhase
    mu: float
    targets_cleared: bool
    summary: str
    findings: tuple[str, ...] = ()  # what the oracles saw: feedback for a retry
    interfered: bool = False  # someone else's change landed during the window
    # The target findings that cleared. With some still firing, a change that cleared
    # these and worsened nothing is kept: the incident continues with what still fires.
    cleared: tuple[str, ...] = ()


@dataclass(frozen=True)
class WindowAnswer:
    """Where a window stands after its recorded measurements: judged, or the next one due."""

    verdict: Verdict | None  # None: still open
    next_at: float = 0.0  # an open window's next measurement is due then


class MergeRefused(Exception):
    """The forge refused the merge; ``retryable`` when a re-gate on the new head may help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class Ports(Protocol):
    def open_pr(self, plan: Plan) -> OpenedPR: ...
    def pr_state(self, number: int) -> PrState: ...
    def gate(self, plan: Plan, number: int) -> GateResult: ...
    def main_head(self) -> str: ...
    def approved(self, number: int) -> bool: ...
    def held(self, number: int) -> bool: ...  # a person said: do not merge, even if allowed
    def merge(self, number: int, head_sha: str) -> str: ...
    def refresh_branch(self, plan: Plan, number: int) -> OpenedPR: ...
    def sync_status(self, sha: str) -> SyncState: ...
    # One measurement now, never a wait (see :mod:`~gitmedic.reconciler.transaction.window`).
    def measure(self, plan: Plan, deployed_sha: str, stage: Stage) -> Measurement: ...
    # The window judged from the recorded measurements alone, or when the next is due.
    def window(
        self, plan: Plan, deployed_sha: str, measurements: Sequence[Measurement]
    ) -> WindowAnswer: ...
    def caused(self, plan: Plan) -> tuple[Mapping[str, Any], ...]: ...  # new since checkpoint
    # The revert PR of ``state``'s merged PR; ``state`` is the undoing: what was measured.
    def open_revert(self, state: TxnState) -> OpenedPR: ...
    def announce(self, state: TxnState, message: str) -> None: ...
