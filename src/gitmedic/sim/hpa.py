"""HorizontalPodAutoscalers: the replicas they hold their target at, and their status.

Always rendered as ``autoscaling/v2`` (what the API serves and the live loader
lists); a ``v1`` spec's ``targetCPUUtilizationPercentage`` becomes the
equivalent resource metric. A CPU metric needs a CPU request on every container
of the target, read after the API server's defaulting (a CPU limit, or a
LimitRange default, is a request: :mod:`gitmedic.sim.defaults`), else
``ScalingActive=False/FailedGetResourceMetric`` and the HPA leaves replicas
alone, the hpa-no-cpu-request fault.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.quantity import millicores
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.sim.conditions import condition
from gitmedic.sim.defaults import defaulted_spec
from gitmedic.sim.fate import DEFAULT_CPU_USE_M, PodFate
from gitmedic.sim.load import Demand
from gitmedic.sim.stamps import iso


@dataclass(frozen=True)
class Scaling:
    hpa: Obj
    target: Workload | None
    replicas: int | None  # what the target runs at; None: the HPA does not act
    body: dict[str, Any]


def autoscale(
    hpa: Obj,
    desired: Snapshot,
    fates: Mapping[tuple[str, str, str], PodFate],
    created: float,
    demands: Mapping[tuple[str, str, str], Demand] | None = None,
) -> Scaling:
    ref = mapping(hpa.spec.get("scaleTargetRef"))
    target = next(
        (
            w
            for w in desired.workloads(hpa.namespace)
            if w.obj.kind == ref.get("kind") and w.obj.name == ref.get("name")
        ),
        None,
    )
    low = _int(hpa.spec.get("minReplicas"), 1)
    high = _int(hpa.spec.get("maxReplicas"), low)
    metrics = _metrics(hpa)
    spec = {k: v for k, v in hpa.spec.items() if k != "targetCPUUtilizationPercentage"}
    spec.update(metrics=metrics, minReplicas=low, maxReplicas=high)
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {**hpa.metadata, "creationTimestamp": iso(created), "resourceVersion": "1"},
        "spec": spec,
    }
    since = iso(created)
    if target is None:
        body["status"] = {
            "currentReplicas": 0,
            "desiredReplicas": 0,
            "conditions": [
                condition(
                    "AbleToScale",
                    False,
                    "FailedGetScale",
                    f"the HPA controller was unable to get the target's current scale: "
                    f'{str(ref.get("kind", "")).lower()}s.apps "{ref.get("name")}" not found',
                    since,
                )
            ],
        }
        return Scaling(hpa, None, None, body)
    current = target.replicas if target.replicas is not None else 1
    containers = _pod_containers(target, desired)
    missing = _missing_cpu_request(containers) if _uses_cpu(metrics) else ""
    if missing:
        body["status"] = {
            "currentReplicas": current,
            "desiredReplicas": current,
            "conditions": [
                condition(
                    "AbleToScale",
                    True,
                    "SucceededGetScale",
                    "the HPA controller was able to get the target's current scale",
                    since,
                ),
                condition(
                    "ScalingActive",
                    False,
                    "FailedGetResourceMetric",
                    "the HPA was unable to compute the replica count: "
                    "failed to get cpu utilization: "
                    f"missing request for cpu in container {missing}",
                    since,
                ),
            ],
        }
        return Scaling(hpa, target, None, body)
    key = (target.obj.kind, target.obj.namespace, target.obj.name)
    util = _utilization(containers, fates.get(key), (demands or {}).get(key), current)
    goal = _cpu_target(metrics)
    wanted = math.ceil(current * util / goal) if goal and util else current
    replicas = min(max(wanted, low), high)
    body["status"] = {
        "currentReplicas": current,
        "desiredReplicas": replicas,
        "currentMetrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {
                        "averageUtilization": util,
                        "averageValue": f"{DEFAULT_CPU_USE_M}m",
                    },
                },
            }
        ]
        if _uses_cpu(metrics)
        else [],
        "conditions": [
            condition(
                "AbleToScale",
                True,
                "ReadyForNewScale",
                "recommended size matches current size",
                since,
            ),
            condition(
                "ScalingActive",
                True,
                "ValidMetricFound",
                "the HPA was able to successfully calculate a replica count from cpu resource "
                "utilization (percentage of request)",
                since,
            ),
            _limited(wanted, low, high, since),
        ],
    }
    return Scaling(hpa, target, replicas, body)


def _limited(wanted: int, low: int, high: int, since: str) -> dict[str, Any]:
    said = "the desired replica count is"
    if wanted < low:
        why = ("TooFewReplicas", f"{said} less than the minimum replica count")
    elif wanted > high:
        why = ("TooManyReplicas", f"{said} more than the maximum replica count")
    else:
        why = ("DesiredWithinRange", f"{said} within the acceptable range")
    return condition("ScalingLimited", not low <= wanted <= high, why[0], why[1], since)


def _metrics(hpa: Obj) -> list[Any]:
    if "targetCPUUtilizationPercentage" in hpa.spec:
        pct = _int(hpa.spec.get("targetCPUUtilizationPercentage"), 80)
        return [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": pct},
                },
            }
        ]
    return list(as_list(hpa.spec.get("metrics")))


def _uses_cpu(metrics: list[Any]) -> bool:
    return any(mapping(mapping(m).get("resource")).get("name") == "cpu" for m in metrics)


def _cpu_target(metrics: list[Any]) -> int:
    for m in metrics:
        res = mapping(mapping(m).get("resource"))
        if res.get("name") == "cpu":
            return _int(mapping(res.get("target")).get("averageUtilization"), 0)
    return 0


def _pod_containers(target: Workload, desired: Snapshot) -> list[Mapping[str, Any]]:
    """The target's containers as its pods hold them (requests defaulted from limits)."""
    spec = defaulted_spec(target.pod_spec, desired, target.obj.namespace)
    return [mapping(c) for c in as_list(spec.get("containers"))]


def _cpu_request(container: Mapping[str, Any]) -> int | None:
    return millicores(mapping(mapping(container.get("resources")).get("requests")).get("cpu"))


def _missing_cpu_request(containers: list[Mapping[str, Any]]) -> str:
    return next((str(c.get("name")) for c in containers if _cpu_request(c) is None), "")


def _utilization(
    containers: list[Mapping[str, Any]], fate: PodFate | None, demand: Demand | None, current: int
) -> int:
    uses = {f.name: float(f.cpu_use_m) for f in fate.containers} if fate else {}
    if demand is not None:  # a load spread over the replicas there are (sim.load)
        uses[demand.container] = demand.total_m / max(1, current)
    used = sum(uses.values()) if uses else DEFAULT_CPU_USE_M
    requested = sum(_cpu_request(c) or 0 for c in containers)
    return round(100 * used / requested) if requested else 0


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
