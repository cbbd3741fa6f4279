"""Every Ready replica of a workload is busy: its CPU use at its CPU limit, on every pod.

Usage comes from the metrics API (``PodMetrics`` of ``metrics.k8s.io``, what
``kubectl top`` reads). A container cannot use more CPU than its limit (the
kernel throttles it), so one at :data:`BUSY` of its limit or more is
saturated; when every Ready pod of a Deployment or StatefulSet is, more load
cannot be spread over the replicas there are and requests queue. One finding
per workload, naming its busiest container and, when a HorizontalPodAutoscaler
owns its replicas, that HPA (``params.hpa``) and whether it already runs (or wants) its
``maxReplicas`` (``params.at_max``: it cannot add more).

Not saturation: a workload with an idle pod (the load is not the limit), with a
pod that is not Ready (a crash or a wedge is another fault), with no metrics
for a pod (nothing is known), or whose containers have no CPU limit (a
container without one is never throttled). Live only: desired state holds no
usage. ``params`` hold what stays the same while the fault lasts (the
container and the HPA); usage numbers go into the evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.builtin._hpa import target_ref
from gitmedic.detectors.builtin._pods import is_ready
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.quantity import millicores
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

BUSY = 0.9  # share of the CPU limit a throttled container reaches
SCALED = frozenset({"Deployment", "StatefulSet"})

SPEC = DetectorSpec(
    id="workload-saturated",
    description="Every Ready pod of a workload runs a container at its CPU limit (metrics API).",
    kinds=frozenset({"Deployment", "StatefulSet", "Pod", "PodMetrics", "HorizontalPodAutoscaler"}),
    severity=Severity.CRITICAL,
    remediation="Scale out: raise replicas, or the HPA's maxReplicas, within your bounds.",
    scope=Scope.LIVE,
    certain_because=("read from live usage against the workload's limits"),
    playbooks=("workload-saturated",),
)


@dataclass(frozen=True)
class Busy:
    container: str
    use_m: int
    limit_m: int


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    usage = _usage(snapshot)
    for wl in snapshot.workloads():
        if wl.obj.kind not in SCALED:
            continue
        selector = mapping(mapping(wl.obj.spec.get("selector")).get("matchLabels"))
        selected = snapshot.pods_selected_by(wl.obj.namespace, selector or wl.template_labels)
        # a pod being deleted is leaving (_pods' convention): it neither serves nor counts
        pods = [p for p in selected if p.metadata.get("deletionTimestamp") is None]
        busiest = _all_busy(pods, usage)
        if busiest is not None:
            yield _finding(snapshot, wl, pods, busiest)


def _usage(snapshot: Snapshot) -> dict[tuple[str, str], dict[str, int]]:
    """(namespace, pod) -> container -> CPU millicores in use."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for metrics in snapshot.of_kind("PodMetrics"):
        used = {
            str(mapping(c).get("name")): millicores(mapping(mapping(c).get("usage")).get("cpu"))
            for c in as_list(metrics.body.get("containers"))
        }
        out[(metrics.namespace, metrics.name)] = {k: v for k, v in used.items() if v is not None}
    return out


def _all_busy(pods: list[Obj], usage: dict[tuple[str, str], dict[str, int]]) -> Busy | None:
    """The busiest container if every pod is Ready and has one at its limit, else None."""
    if not pods:
        return None
    found: list[Busy] = []
    for pod in pods:
        busy = _busy(pod, usage.get((pod.namespace, pod.name), {}))
        if busy is None or not is_ready(pod):
            return None
        found.append(busy)
    return max(found, key=lambda b: (b.use_m / b.limit_m, b.container))


def _busy(pod: Obj, used: dict[str, int]) -> Busy | None:
    best: Busy | None = None
    for c in as_list(pod.spec.get("containers")):
        name = str(mapping(c).get("name"))
        limit = millicores(mapping(mapping(mapping(c).get("resources")).get("limits")).get("cpu"))
        use = used.get(name)
        if not limit or use is None or use < BUSY * limit:
            continue
        if best is None or use / limit > best.use_m / best.limit_m:
            best = Busy(name, use, limit)
    return best


def _hpa_of(snapshot: Snapshot, wl: Workload) -> Obj | None:
    for hpa in snapshot.of_kind("HorizontalPodAutoscaler", wl.obj.namespace):
        ref = target_ref(hpa)
        if ref is not None and (ref.kind, ref.name) == (wl.obj.kind, wl.obj.name):
            return hpa
    return None


def hpa_replicas(hpa: Obj) -> int:
    """The most replicas the HPA runs or wants (``desiredReplicas`` is capped at its max)."""
    status = mapping(hpa.status)
    counts = [status.get("currentReplicas"), status.get("desiredReplicas")]
    return max((c for c in counts if isinstance(c, int) and not isinstance(c, bool)), default=0)


def _finding(snapshot: Snapshot, wl: Workload, pods: list[Obj], busy: Busy) -> Finding:
    hpa = _hpa_of(snapshot, wl)
    high = mapping(hpa.spec).get("maxReplicas") if hpa is not None else None
    wanted = hpa_replicas(hpa) if hpa is not None else 0
    at_max = isinstance(high, int) and wanted >= high
    owner = f"; HPA {hpa.name} at {wanted}/{high} (maxReplicas)" if hpa is not None else ""
    share = round(100 * busy.use_m / busy.limit_m)
    return SPEC.finding(
        wl.ref,
        f"{wl.ref.kind} {wl.obj.name}: all {len(pods)} Ready replica(s) busy, "
        f"{busy.container} at {share}% of its CPU limit",
        evidence=(
            f"{busy.container} uses {busy.use_m}m of its {busy.limit_m}m CPU limit on every "
            f"pod ({', '.join(sorted(p.name for p in pods))}){owner}"
        ),
        related=[p.ref for p in pods] + ([hpa.ref] if hpa is not None else []),
        params={
            "container": busy.container,
            "hpa": hpa.name if hpa is not None else "",
            "at_max": at_max,
        },
    )
