"""Transactions: one change, one PR, kept only if the app is no worse after sync."""

from gitmedic.reconciler.transaction.journal import (
    IncidentRow,
    IntentRow,
    Journal,
    JournalConflict,
    LockGrant,
)
from gitmedic.reconciler.transaction.machine import MachineConfig, advance
from gitmedic.reconciler.transaction.model import Outcome, Phase, Plan, Record, TxnState
from gitmedic.reconciler.transaction.ports import (
    GateResult,
    MergeRefused,
    OpenedPR,
    Ports,
    PrState,
    SyncPhase,
    SyncState,
    Verdict,
    VerdictPhase,
)
from gitmedic.reconciler.transaction.runner import Advanced, Runner

__all__ = [
    "Advanced",
    "GateResult",
    "IncidentRow",
    "IntentRow",
    "Journal",
    "JournalConflict",
    "LockGrant",
    "MachineConfig",
    "MergeRefused",
    "OpenedPR",
    "Outcome",
    "Phase",
    "Plan",
    "Ports",
    "PrState",
    "Record",
    "Runner",
    "SyncPhase",
    "SyncState",
    "TxnState",
    "Verdict",
    "VerdictPhase",
    "advance",
]
