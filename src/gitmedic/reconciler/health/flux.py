"""Flux Kustomization and HelmRelease health from their conditions.

The rules are Argo CD's built-in Lua health checks for these kinds
(``resource_customizations/{kustomize,helm}.toolkit.fluxcd.io/.../health.lua``):
suspended -> Suspended; ``Ready=Unknown`` together with ``Reconciling=True`` ->
Progressing; enough succeeded conditions (Ready for a Kustomization; Ready plus
Released or TestSuccess for a HelmRelease) -> Healthy; anything else -> Degraded.
The message is the Ready condition's reason.
"""

from __future__ import annotations

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus


def kustomization_health(obj: JSON) -> Health:
    return _flux_health(obj, extra_success=(), needed=1)


def helmrelease_health(obj: JSON) -> Health:
    return _flux_health(obj, extra_success=("Released", "TestSuccess"), needed=2)


def _flux_health(obj: JSON, *, extra_success: tuple[str, ...], needed: int) -> Health:
    if f.mapping(obj, "spec").get("suspend") is True:
        return Health(HealthStatus.SUSPENDED, f"{obj.get('kind')} is suspended")
    if f.mapping(obj, "status").get("conditions") is None:
        return Health(HealthStatus.PROGRESSING, "Status unknown")
    progressing = succeeded = 0
    message = ""
    for cond in f.items(obj, "status", "conditions"):
        kind, status = cond.get("type"), cond.get("status")
        if kind == "Ready":
            succeeded += status == "True"
            progressing += status == "Unknown"
            message = str(cond.get("reason") or "")
        elif kind in extra_success and status == "True":
            succeeded += 1
        elif kind == "Reconciling" and status == "True":
            progressing += 1
    if progressing == 2:
        return Health(HealthStatus.PROGRESSING, message)
    if succeeded == needed:
        return Health(HealthStatus.HEALTHY, message)
    return Health(HealthStatus.DEGRADED, message)
