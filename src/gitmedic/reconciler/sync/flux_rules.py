"""When is a commit deployed by Flux? The rule, on a Kustomization object.

Deployed = ``Ready=True`` and ``status.lastAppliedRevision`` names SHA, in any of
Flux's spellings: ``main@sha1:<sha>`` (Flux 2.x), ``main/<sha>`` (older),
``sha1:<sha>`` or a bare ``<sha>``. The status must describe the current spec
(``observedGeneration`` not behind ``metadata.generation``).

``Ready=False`` with a terminal reason (the artifact cannot be fetched, the
kustomize build fails, health checks failed after the timeout, pruning or the
apply failed) is Failed when the failed attempt was for SHA or names no
revision; ``Reconciling=True``, ``Ready=Unknown``, a dependency not ready yet, or
a failure of some other revision is Progressing. A suspended Kustomization is
Progressing with a message, since a person may resume it before the deadline.

Applied (what a revert waits for) is weaker than Deployed: kustomize-controller
sets ``lastAppliedRevision`` only once the health checks pass (``wait`` or
``healthChecks``), so a revert to an unhealthy state never gets it. Its health
checks run only after the apply succeeded, so SHA is applied as soon as they
started for it (the ``Healthy`` condition's "Running health checks for revision
...") or failed for it (``HealthCheckFailed`` with ``lastAttemptedRevision`` SHA).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.reconciler.sync.state import SyncPhase, SyncState, revision_matches

TERMINAL_REASONS = frozenset(
    {"ArtifactFailed", "BuildFailed", "HealthCheckFailed", "PruneFailed", "ReconciliationFailed"}
)


def commit_of(revision: str) -> str:
    """The commit SHA inside a Flux revision string."""
    tail = revision.rsplit("@", 1)[-1]
    for prefix in ("sha1:", "sha256:"):
        if tail.startswith(prefix):
            return tail[len(prefix) :]
    return tail.rsplit("/", 1)[-1]


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found = status.get("conditions")
    if not isinstance(found, list):
        return {}
    return {str(c.get("type")): c for c in found if isinstance(c, Mapping)}


def assess_kustomization(obj: Any, sha: str, at: float = 0.0) -> SyncState:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    if not isinstance(status, Mapping):
        return SyncState(SyncPhase.PROGRESSING, "Kustomization has no status yet", at=at)
    applied = str(status.get("lastAppliedRevision") or "")
    phase, message = _verdict(obj, status, sha)
    done = bool(applied) and revision_matches(commit_of(applied), sha)
    done = done or _health_checked(status, sha)
    return SyncState(phase, message, commit_of(applied) if applied else "", at, applied=done)


_HEALTH_RUNNING = "Running health checks for revision "


def _health_checked(status: Mapping[str, Any], sha: str) -> bool:
    """Flux ran (or is running) its health checks on SHA, so it has applied SHA."""
    attempted = str(status.get("lastAttemptedRevision") or "")
    if not attempted or not revision_matches(commit_of(attempted), sha):
        return False
    conditions = _conditions(status)
    ready, healthy = conditions.get("Ready", {}), conditions.get("Healthy", {})
    if ready.get("status") == "False" and ready.get("reason") == "HealthCheckFailed":
        return True
    message = str(healthy.get("message") or "")
    if healthy.get("status") != "Unknown" or not message.startswith(_HEALTH_RUNNING):
        return False
    revision = message[len(_HEALTH_RUNNING) :].split(" ", 1)[0]
    return revision_matches(commit_of(revision), sha)


def _verdict(obj: Mapping[str, Any], status: Mapping[str, Any], sha: str) -> tuple[SyncPhase, str]:
    spec, meta = obj.get("spec"), obj.get("metadata")
    if isinstance(spec, Mapping) and spec.get("suspend") is True:
        return SyncPhase.PROGRESSING, "Kustomization is suspended"
    generation = meta.get("generation") if isinstance(meta, Mapping) else None
    observed = status.get("observedGeneration")
    if isinstance(generation, int) and isinstance(observed, int) and observed < generation:
        return SyncPhase.PROGRESSING, "the controller has not observed the latest spec yet"
    conditions = _conditions(status)
    ready = conditions.get("Ready", {})
    reason, message = str(ready.get("reason") or ""), str(ready.get("message") or "")
    if ready.get("status") == "False" and reason in TERMINAL_REASONS:
        return _failure(status, sha, reason, message)
    if ready.get("status") != "True" or conditions.get("Reconciling", {}).get("status") == "True":
        return SyncPhase.PROGRESSING, f"{reason or 'not ready'}: {message}".rstrip()
    applied = str(status.get("lastAppliedRevision") or "")
    if not revision_matches(commit_of(applied), sha):
        return SyncPhase.PROGRESSING, f"applied {applied or 'nothing'}, not {sha}"
    return SyncPhase.DEPLOYED, f"applied {applied}: {message}".rstrip(": ")


def _failure(
    status: Mapping[str, Any], sha: str, reason: str, message: str
) -> tuple[SyncPhase, str]:
    attempted = str(status.get("lastAttemptedRevision") or "")
    if attempted and not revision_matches(commit_of(attempted), sha):
        return SyncPhase.PROGRESSING, f"{reason} for {attempted}, waiting for {sha}"
    return SyncPhase.FAILED, f"{reason}: {message}"
