"""HorizontalPodAutoscaler health from its conditions.

autoscaling/v2, v2beta1 and v2beta2 carry ``status.conditions``; autoscaling/v1
carries the same conditions as JSON in the ``autoscaling.alpha.kubernetes.io/conditions``
annotation. Any degraded condition wins over any healthy one; an HPA with neither
is waiting to autoscale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON, Malformed
from gitmedic.reconciler.health.status import Health, HealthStatus

CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
WAITING = Health(HealthStatus.PROGRESSING, "Waiting to Autoscale")

_DEGRADED = frozenset(
    {
        ("AbleToScale", "FailedGetScale"),
        ("AbleToScale", "FailedUpdateScale"),
        ("ScalingActive", "FailedGetResourceMetric"),
        ("ScalingActive", "FailedGetObjectMetric"),
        ("ScalingActive", "FailedGetPodsMetric"),
        ("ScalingActive", "FailedGetExternalMetric"),
        ("ScalingActive", "FailedComputeMetricsReplicas"),
        ("ScalingActive", "InvalidSelector"),
    }
)
_HEALTHY_TYPES = frozenset({"AbleToScale", "ScalingLimited"})


def hpa_health(obj: JSON) -> Health:
    version = str(obj.get("apiVersion", ""))
    if version == "autoscaling/v1":
        conditions = _annotation_conditions(obj)
        if not conditions:
            return WAITING
    else:
        conditions = f.items(obj, "status", "conditions")
    return _check(conditions)


def _annotation_conditions(obj: JSON) -> Sequence[JSON]:
    raw = f.annotations_of(obj).get(CONDITIONS_ANNOTATION)
    if raw is None:
        return []
    try:
        conditions = json.loads(str(raw))
    except ValueError as err:
        raise Malformed(f"failed to convert conditions annotation to typed: {err}") from None
    if not isinstance(conditions, list) or not all(isinstance(c, Mapping) for c in conditions):
        raise Malformed("conditions annotation is not a list of conditions")
    return conditions


def _check(conditions: Sequence[JSON]) -> Health:
    for cond in conditions:
        if (cond.get("type"), cond.get("reason")) in _DEGRADED:
            return Health(HealthStatus.DEGRADED, str(cond.get("message") or ""))
    for cond in conditions:
        if cond.get("type") in _HEALTHY_TYPES and cond.get("status") == "True":
            return Health(HealthStatus.HEALTHY, str(cond.get("message") or ""))
    return WAITING
