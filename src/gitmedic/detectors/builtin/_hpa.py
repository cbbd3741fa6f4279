"""Reading HorizontalPodAutoscalers of every API version (v1, v2beta1, v2beta2, v2)."""

from __future__ import annotations

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import JSON, Obj, as_list, mapping


def target_ref(hpa: Obj) -> Resource | None:
    ref = mapping(hpa.spec.get("scaleTargetRef"))
    kind, name = ref.get("kind"), ref.get("name")
    if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
        return None
    return Resource(kind, hpa.namespace, name, str(ref.get("apiVersion") or "apps/v1"))


def cpu_utilisation_containers(hpa: Obj) -> set[str | None] | None:
    """The containers a CPU-utilisation target reads (None: all of them), or None if no such target.

    autoscaling/v1 scales on CPU utilisation only, and without metrics v2 defaults to
    80% CPU utilisation as well.
    """
    if "targetCPUUtilizationPercentage" in hpa.spec or not as_list(hpa.spec.get("metrics")):
        return {None}
    found: set[str | None] = set()
    for metric in as_list(hpa.spec.get("metrics")):
        metric = mapping(metric)
        if metric.get("type") == "Resource" and _cpu_utilisation(mapping(metric.get("resource"))):
            found.add(None)
        if metric.get("type") == "ContainerResource":
            source = mapping(metric.get("containerResource"))
            if _cpu_utilisation(source):
                found.add(str(source.get("container", "")))
    return found or None


def _cpu_utilisation(source: JSON) -> bool:
    if source.get("name") != "cpu":
        return False
    target = mapping(source.get("target"))
    return target.get("type") == "Utilization" or "targetAverageUtilization" in source
