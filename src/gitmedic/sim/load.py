"""CPU demand on a workload (the ``cpu-saturation`` fault) and the usage it shows.

A demand is the CPU (total millicores) a workload's callers ask of one of its
containers; it spreads evenly over the workload's Ready pods, and each pod uses
its share up to the container's CPU limit (the kernel throttles the rest). The
sim reports that usage as the metrics API does (``PodMetrics`` of
``metrics.k8s.io``, what ``kubectl top`` and the HPA read) for the pods of the
workloads under a demand only: the others' use is the fate's constant default,
which the sim never reported, so nothing else changes. An HPA targeting a
workload under demand computes its utilisation from the demand
(:mod:`gitmedic.sim.hpa`), as an HPA that has converged would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.quantity import millicores
from gitmedic.detectors.snapshot import as_list, mapping
from gitmedic.sim.fate import DEFAULT_CPU_USE_M, DEFAULT_WORKING_SET
from gitmedic.sim.pods import PodView
from gitmedic.sim.stamps import iso

Key = tuple[str, str, str]  # kind, namespace, name
METRICS_WINDOW = "30s"


@dataclass(frozen=True)
class Demand:
    container: str
    total_m: int  # millicores asked of the container over all the workload's pods


def owner_key(pod: PodView) -> Key | None:
    """The workload a pod belongs to (a Deployment through its ReplicaSet)."""
    meta = pod.body["metadata"]
    owner = mapping((meta.get("ownerReferences") or [{}])[0])
    kind, name = str(owner.get("kind", "")), str(owner.get("name", ""))
    if kind == "ReplicaSet":
        kind, name = "Deployment", name.rsplit("-", 1)[0]
    return (kind, str(meta.get("namespace", "")), name) if kind and name else None


def pod_metrics(
    pods: Iterable[PodView], demands: Mapping[Key, Demand], now: float
) -> list[dict[str, Any]]:
    """``PodMetrics`` for the Ready pods of the workloads under a demand."""
    loaded = [(p, owner_key(p)) for p in pods if p.ready]
    ready = Counter(key for _, key in loaded if key in demands)
    out = []
    for pod, key in loaded:
        demand = demands.get(key) if key is not None else None
        if demand is not None and key is not None:
            out.append(_metrics(pod, demand, demand.total_m / ready[key], now))
    return out


def _metrics(pod: PodView, demand: Demand, share_m: float, now: float) -> dict[str, Any]:
    meta = pod.body["metadata"]
    containers = []
    for c in as_list(pod.body["spec"].get("containers")):
        name = str(mapping(c).get("name"))
        limit = millicores(mapping(mapping(mapping(c).get("resources")).get("limits")).get("cpu"))
        use = share_m if name == demand.container else float(DEFAULT_CPU_USE_M)
        use = min(use, float(limit)) if limit else use
        containers.append(
            {"name": name, "usage": {"cpu": f"{int(use)}m", "memory": _mi(DEFAULT_WORKING_SET)}}
        )
    return {
        "apiVersion": "metrics.k8s.io/v1beta1",
        "kind": "PodMetrics",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": dict(meta.get("labels") or {}),
            "creationTimestamp": iso(now),
        },
        "timestamp": iso(now),
        "window": METRICS_WINDOW,
        "containers": containers,
    }


def _mi(size: int) -> str:
    return f"{size // (1024 * 1024)}Mi"
