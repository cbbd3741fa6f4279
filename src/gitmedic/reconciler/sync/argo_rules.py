"""When is a commit deployed by Argo CD? The rule, on an Application object.

Shared by the REST watcher and the custom-resource watcher, so both decide the
same way. Deployed needs all of:

- ``operationState.phase == Succeeded`` and ``operationState.syncResult.revision == SHA``
  (the last sync operation applied exactly that commit);
- ``sync.status == Synced`` and ``sync.revision == SHA`` (nothing drifted since);
- ``health.status == Healthy``, assessed no earlier than ``operationState.finishedAt``
  (the later of ``health.lastTransitionTime`` and ``reconciledAt``), so a Healthy
  left over from before the sync does not count.

Whatever the phase, the state says whether SHA is *applied* (the operation
Succeeded at SHA and the app is Synced to it, healthy or not) and which managed
resources are still Progressing (``status.resources[].health``): a transaction
waits for the apply and for the rollout of what its own candidate changed, and
leaves the rest of the app's health to its verification window.

``phase`` Failed or Error is Failed with the operation's message, when that
operation was for SHA (or names no revision); a failed operation for another
commit only means ours has not started yet. Anything else is Progressing with a
message saying what is still missing; an object we cannot read is Unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gitmedic.reconciler.sync.state import SyncPhase, SyncState, revision_matches

JSON = Mapping[str, Any]


def _get(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _text(node: Any, *path: str) -> str:
    value = _get(node, *path)
    return value if isinstance(value, str) else ""


def _revisions(node: Any) -> list[str]:
    """``revision`` plus multi-source ``revisions`` of a sync status or result."""
    found = [_text(node, "revision")]
    many = _get(node, "revisions")
    if isinstance(many, list):
        found += [r for r in many if isinstance(r, str)]
    return [r for r in found if r]


def _names(node: Any, sha: str) -> bool:
    return any(revision_matches(r, sha) for r in _revisions(node))


def _time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def assess_application(app: Any, sha: str, at: float = 0.0) -> SyncState:
    status = _get(app, "status")
    if not isinstance(status, Mapping):
        return SyncState(SyncPhase.UNKNOWN, "Application has no status", at=at)
    synced_rev = _text(status, "sync", "revision")
    state = _operation_state(status, sha)
    applied = (
        state is None
        and _text(status, "sync", "status") == "Synced"
        and _names(_get(status, "sync"), sha)
    )
    if state is None:
        state = _sync_and_health(status, sha)
    phase, message = state
    return SyncState(
        phase, message, synced_rev, at, applied=bool(applied), progressing=_progressing(status)
    )


def _progressing(status: JSON) -> tuple[str, ...]:
    """The managed resources whose own health is Progressing, as "Kind/namespace/name"."""
    resources = _get(status, "resources")
    found = []
    for entry in resources if isinstance(resources, list) else ():
        if _text(entry, "health", "status") != "Progressing" or not _text(entry, "name"):
            continue
        where = [_text(entry, "kind"), _text(entry, "namespace"), _text(entry, "name")]
        found.append("/".join(part for part in where if part))
    return tuple(sorted(found))


def _operation_state(status: JSON, sha: str) -> tuple[SyncPhase, str] | None:
    """The verdict of the operation alone, or None once it Succeeded at SHA."""
    op = _get(status, "operationState")
    phase = _text(op, "phase")
    message = _text(op, "message")
    if not isinstance(op, Mapping) or not phase:
        return SyncPhase.PROGRESSING, "no sync operation yet"
    result_names_sha = _names(_get(op, "syncResult"), sha)
    op_names_sha = _names(_get(op, "operation", "sync"), sha)
    if phase in ("Failed", "Error"):
        names_any = _revisions(_get(op, "syncResult")) or _revisions(_get(op, "operation", "sync"))
        if result_names_sha or op_names_sha or not names_any:
            return SyncPhase.FAILED, f"sync operation {phase}: {message}"
        return SyncPhase.PROGRESSING, f"last operation ({phase}) was for another revision"
    if phase != "Succeeded":
        return SyncPhase.PROGRESSING, f"sync operation {phase}" + (
            f": {message}" if message else ""
        )
    if not result_names_sha:
        rev = _text(op, "syncResult", "revision") or "no revision"
        return SyncPhase.PROGRESSING, f"last successful sync applied {rev}, not {sha}"
    return None


def _sync_and_health(status: JSON, sha: str) -> tuple[SyncPhase, str]:
    sync_status = _text(status, "sync", "status")
    if sync_status != "Synced":
        return SyncPhase.PROGRESSING, f"sync status is {sync_status or 'unset'}"
    if not _names(_get(status, "sync"), sha):
        rev = _text(status, "sync", "revision") or "no revision"
        return SyncPhase.PROGRESSING, f"synced to {rev}, not {sha}"
    health = _text(status, "health", "status")
    if health != "Healthy":
        detail = _text(status, "health", "message")
        return (
            SyncPhase.PROGRESSING,
            f"health is {health or 'unset'}{': ' if detail else ''}{detail}",
        )
    return _freshness(status)


def _freshness(status: JSON) -> tuple[SyncPhase, str]:
    finished = _time(_text(status, "operationState", "finishedAt"))
    if finished is None:
        return SyncPhase.PROGRESSING, "sync operation has no finish time yet"
    # Health is assessed at every reconciliation (``reconciledAt``), but its
    # ``lastTransitionTime`` moves only when the status changes: a Healthy app that
    # stays Healthy through a sync keeps the old one (Argo CD v3.6 does), so the
    # later of the two is when health was last assessed.
    assessed = [
        (when, raw)
        for raw in (_text(status, "health", "lastTransitionTime"), _text(status, "reconciledAt"))
        if (when := _time(raw)) is not None
    ]
    if not assessed:
        return SyncPhase.PROGRESSING, "health has not been assessed since the sync"
    seen, seen_raw = max(assessed)
    if seen < finished:
        return SyncPhase.PROGRESSING, f"health was assessed at {seen_raw}, before the sync finished"
    return SyncPhase.DEPLOYED, "synced and healthy"
