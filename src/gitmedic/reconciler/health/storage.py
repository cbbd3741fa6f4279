"""Health of a PersistentVolumeClaim, by phase."""

from __future__ import annotations

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus

_BY_PHASE = {
    "Bound": HealthStatus.HEALTHY,
    "Pending": HealthStatus.PROGRESSING,
    "Lost": HealthStatus.DEGRADED,
}


def pvc_health(obj: JSON) -> Health:
    return Health(_BY_PHASE.get(f.string(obj, "status", "phase"), HealthStatus.UNKNOWN))
