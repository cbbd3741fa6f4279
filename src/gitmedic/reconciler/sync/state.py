"""The sync-watcher protocol: "is commit SHA deployed and healthy, still
progressing, or failed?", asked of any GitOps engine, and the wait around it.

A watcher answers one question per call and never waits itself; ``wait_deployed``
polls it on an injected clock. Deployed and Failed end the wait; Progressing and
Unknown (a transient read error: 5xx, timeouts, garbage) are polled again until
the deadline, which is honoured exactly: the last sleep is cut short so the final
check happens at ``start + timeout`` and the wait returns then.

To add an engine, implement ``check(sha) -> SyncState``; nothing else is needed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Protocol

from gitmedic.reconciler.clock import Clock


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


@dataclass(frozen=True)
class WaitResult:
    state: SyncState  # the last observation
    timed_out: bool
    waited: float  # seconds on the clock from the first check to the return
    checks: int

    @property
    def deployed(self) -> bool:
        return self.state.phase is SyncPhase.DEPLOYED


def wait_deployed(
    watcher: SyncWatcher, sha: str, clock: Clock, *, timeout: float, interval: float
) -> WaitResult:
    """Poll until SHA is deployed, fails, or ``timeout`` seconds pass on ``clock``."""
    if timeout < 0 or interval <= 0:
        raise ValueError(f"need timeout >= 0 and interval > 0, got {timeout} and {interval}")
    start = clock.now()
    deadline = start + timeout
    checks = 0
    while True:
        state = watcher.check(sha)
        checks += 1
        remaining = deadline - clock.now()
        if state.phase.terminal or remaining <= 0:
            break
        clock.sleep(min(interval, remaining))
    timed_out = not state.phase.terminal
    if timed_out:
        state = replace(state, message=f"timed out after {timeout:g}s: {state.message}")
    return WaitResult(state, timed_out, clock.now() - start, checks)


def revision_matches(observed: str, sha: str) -> bool:
    """Does a reported revision name commit SHA? (SHA may be abbreviated, >= 7 chars.)"""
    if not observed or not sha:
        return False
    return observed == sha or (len(sha) >= 7 and observed.startswith(sha))
