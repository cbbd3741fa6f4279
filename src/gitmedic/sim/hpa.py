"""HorizontalPodAutoscalers: the replicas they hold their target at, and their status.

Always rendered as ``autoscaling/v2`` (what the API serves and the live loader
lists); a ``v1`` spec's ``targetCPUUtilizationPercentage`` becomes the
equivalent resource metric. A CPU metric needs a CPU request on every container
of the target, else ``ScalingActive=False/FailedGetResourceMetric`` and the HPA
leaves replicas alone, the hpa-no-cpu-request fault.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.sim.clock import iso
from gitmedic.sim.fate import DEFAULT_CPU_USE_M, PodFate
from gitmedic.sim.quantity import millicores


@dataclass(frozen=True)
class Scaling:
    hpa: Obj
    target: Workload | None
    replicas: int | None  # what the target runs at; None: the HPA does not act
    body: dict[str, Any]


def autoscale(
    hpa: Obj, desired: Snapshot, fates: Mapping[tuple[str, str, str], PodFate], created: float
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
                _cond(
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
    missing = _missing_cpu_request(target) if _uses_cpu(metrics) else ""
    if missing:
        body["status"] = {
            "currentReplicas": current,
            "desiredReplicas": current,
            "conditions": [
                _cond(
                    "AbleToScale",
                    True,
                    "SucceededGetScale",
                    "the HPA controller was able to get the target's current scale",
                    since,
                ),
                _cond(
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
    util = _utilization(target, fates.get((target.obj.kind, target.obj.namespace, target.obj.name)))
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
            _cond(
                "AbleToScale",
                True,
                "ReadyForNewScale",
                "recommended size matches current size",
                since,
            ),
            _cond(
                "ScalingActive",
                True,
                "ValidMetricFound",
                "the HPA was able to successfully calculate a replica count from cpu resource "
                "utilization (percentage of request)",
                since,
            ),
            _cond(
                "ScalingLimited",
                replicas != wanted,
                "TooFewReplicas" if wanted < low else "DesiredWithinRange",
                "the desired replica count is within the acceptable range"
                if replicas == wanted
                else "the desired replica count is less than the minimum replica count",
                since,
            ),
        ],
    }
    return Scaling(hpa, target, replicas, body)


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


def _missing_cpu_request(target: Workload) -> str:
    for c in target.containers(init=False):
        if millicores(mapping(mapping(c.body.get("resources")).get("requests")).get("cpu")) is None:
            return c.name
    return ""


def _utilization(target: Workload, fate: PodFate | None) -> int:
    used = sum(f.cpu_use_m for f in fate.containers) if fate else DEFAULT_CPU_USE_M
    requested = sum(
        millicores(mapping(mapping(c.body.get("resources")).get("requests")).get("cpu")) or 0
        for c in target.containers(init=False)
    )
    return round(100 * used / requested) if requested else 0


def _cond(kind: str, ok: bool, reason: str, message: str, since: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
    }


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
