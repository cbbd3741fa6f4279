"""The cluster-state oracle: the app's pods and workloads through the health
functions, over a snapshot taken by a function it is given (live cluster, sim).

Its result, for conditions, is ``{"worst", "degraded", "progressing",
"unhealthy": [...], "capacity_lost"}`` where ``degraded`` counts objects that are
Degraded, Missing or Unknown. By default it fails on any degraded object.

Its part of the observation is the objects in a bad state (``degraded``) and
the capacity each workload lost: desired replicas minus pods that are Healthy
(Ready), so a pod in CrashLoopBackOff, a Pending pod and a pod that was never
created each remove one replica, while the extra pods of a rolling update's
surge remove none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload
from gitmedic.reconciler.health import Health, HealthStatus, health_of, worst
from gitmedic.reconciler.oracles.metric import MetricSpec, Reading
from gitmedic.reconciler.oracles.observation import CapacityLoss, Observation

BAD = frozenset({HealthStatus.DEGRADED, HealthStatus.MISSING, HealthStatus.UNKNOWN})
DEFAULT_SPEC = MetricSpec(failure_condition='result["degraded"] > 0')


class ClusterStateOracle:
    def __init__(
        self,
        snapshot: Callable[[], Snapshot],
        namespace: str,
        *,
        spec: MetricSpec = DEFAULT_SPEC,
        name: str = "cluster",
    ) -> None:
        self.snapshot = snapshot
        self.namespace = namespace
        self.spec = spec
        self.name = name

    def measure(self) -> Reading:
        snap = self.snapshot()
        healths = object_healths(snap, self.namespace)
        capacity = capacity_losses(snap, self.namespace)
        unhealthy = [
            f"{ref}: {h.status.value}{': ' + h.message if h.message else ''}"
            for ref, h in sorted(healths.items())
            if h.status is not HealthStatus.HEALTHY
        ]
        result = {
            "worst": worst(healths.values()).status.value,
            "degraded": sum(1 for h in healths.values() if h.status in BAD),
            "progressing": sum(1 for h in healths.values() if h.status is HealthStatus.PROGRESSING),
            "unhealthy": unhealthy,
            "capacity_lost": round(sum(c.fraction for c in capacity), 6),
        }
        degraded = tuple(ref for ref, h in sorted(healths.items()) if h.status in BAD)
        return Reading(
            result, Observation(capacity=capacity, degraded=degraded, notes=tuple(unhealthy))
        )


def object_healths(snap: Snapshot, namespace: str) -> dict[Resource, Health]:
    """The health of every object of the namespace whose kind has one."""
    found = {}
    for obj in snap:
        if obj.namespace == namespace and (h := health_of(obj.body)) is not None:
            found[obj.ref] = h
    return found


def capacity_losses(snap: Snapshot, namespace: str) -> tuple[CapacityLoss, ...]:
    serving = _serving_pods_by_owner(snap, namespace)
    losses = []
    for wl in snap.workloads(namespace):
        desired = _desired(wl)
        if desired is None or desired <= 0:
            continue
        unavailable = max(0, desired - serving[wl.ref])
        if unavailable:
            losses.append(CapacityLoss(wl.ref, desired, unavailable))
    return tuple(sorted(losses))


def _serving_pods_by_owner(snap: Snapshot, namespace: str) -> Counter[Resource]:
    serving: Counter[Resource] = Counter()
    for pod in snap.of_kind("Pod", namespace):
        if _serves(pod):
            serving[snap.owner_workload(pod)] += 1
    return serving


def _serves(pod: Obj) -> bool:
    health = health_of(pod.body)
    return health is not None and health.status is HealthStatus.HEALTHY


def _desired(wl: Workload) -> int | None:
    if wl.obj.kind == "DaemonSet":
        value = wl.obj.status.get("desiredNumberScheduled")
        return value if isinstance(value, int) else None
    return wl.replicas
