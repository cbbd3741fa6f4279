"""The sync-watcher protocol: "is commit SHA deployed and healthy, still
progressing, or failed?", asked of any GitOps engine.

A watcher answers one question per call and never waits. The transaction's sync
wait (:mod:`~gitmedic.reconciler.transaction.machine`) asks it once per step:
Deployed and Failed end the wait; Progressing and Unknown (a transient read
error: 5xx, timeouts, garbage) are asked again a poll later, until the sync
timeout, a journaled deadline from the merge.

To add an engine, implement ``check(sha) -> SyncState``; nothing else is needed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol


class SyncPhase(enum.Enum):
    DEPLOYED = "Deployed"
    PROGRESSING = "Progressing"
    FAILED = "Failed"
    UNKNOWN = "Unknown"

    @property
    def terminal(self) -> bool:
        return self in (SyncPhase.DEPLOYED, SyncPhase.FAILED)


@dataclass(frozen=True)
class SyncState:
    phase: SyncPhase
    message: str
    revision: str = ""  # the revision the engine reports as synced, if any
    at: float = 0.0  # clock time of the observation
    # The engine applied exactly SHA, healthy or not. A revert waits for this, not for
    # Deployed: it restores the state from before the change, which may itself have
    # been unhealthy (the incident), and is then judged by mu, not by health.
    applied: bool = False
    # The managed objects the engine reports still Progressing ("Kind/namespace/name"):
    # a rollout the applied commit started that has not finished. The transaction waits
    # for the objects its candidate changed, and no others (their health is the window's).
    progressing: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "phase": self.phase.value,
            "message": self.message,
            "revision": self.revision,
            "at": self.at,
            "applied": self.applied,
            "progressing": list(self.progressing),
        }


class SyncWatcher(Protocol):
    def check(self, sha: str) -> SyncState: ...


def revision_matches(observed: str, sha: str) -> bool:
    """Does a reported revision name commit SHA? (SHA may be abbreviated, >= 7 chars.)"""
    if not observed or not sha:
        return False
    return observed == sha or (len(sha) >= 7 and observed.startswith(sha))
