"""The only workloads behind a Service that others call are scaled to zero.

Callers come from the env-address dependency graph (``topology.callers_of``):
a Service some other workload addresses. If every workload its selector
matches has ``replicas: 0`` it has no endpoints and every call fails. One
finding per scaled-down workload, naming the Services and callers it strands.
A workload kept at zero on purpose that nobody calls is not reported, and a
DaemonSet, Job or CronJob (no fixed replica count) is never judged. A workload
a KEDA ``ScaledObject`` scales is a warning: KEDA scales it up from zero when
its trigger fires, so zero is its idle state.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty
from gitmedic.detectors.topology import callers_of

SCALED_FROM_ZERO = Uncertainty(
    id="scaled-from-zero",
    unseen="an event-driven autoscaler (a KEDA ScaledObject) that scales it up from zero",
    certain_if="no ScaledObject scales it",
)
SPEC = DetectorSpec(
    id="scaled-to-zero",
    description="Every workload behind a Service that other workloads call has replicas 0.",
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "ReplicaSet", "ScaledObject"}),
    severity=Severity.CRITICAL,
    remediation="Scale the workload back to its previous replica count (at least 1).",
    scope=Scope.BOTH,
    playbooks=("scaled-to-zero",),
    uncertain_when=(SCALED_FROM_ZERO,),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    stranded: dict[Resource, tuple[Workload, list[Obj], set[Resource]]] = {}
    for svc, selector in selecting_services(snapshot):
        callers = {c.caller.ref for c in callers_of(snapshot, svc)}
        workloads = selected_workloads(snapshot, svc, selector)
        if not callers or not workloads or any(w.replicas != 0 for w in workloads):
            continue
        for wl in workloads:
            entry = stranded.setdefault(wl.ref, (wl, [], set()))
            entry[1].append(svc)
            entry[2].update(callers)
    scaled = _keda_targets(snapshot)
    for wl, services, callers in stranded.values():
        yield _finding(wl, services, callers, scaler=scaled.get(wl.ref))


def _keda_targets(snapshot: Snapshot) -> dict[Resource, str]:
    """Workloads a KEDA ScaledObject scales (kind defaults to Deployment) -> its name."""
    out: dict[Resource, str] = {}
    for obj in snapshot.of_kind("ScaledObject"):
        target = mapping(obj.spec.get("scaleTargetRef"))
        kind, name = target.get("kind") or "Deployment", target.get("name")
        if isinstance(kind, str) and isinstance(name, str):
            out[Resource(kind, obj.namespace, name)] = obj.name
    return out


def _finding(
    wl: Workload, services: list[Obj], callers: set[Resource], *, scaler: str | None
) -> Finding:
    names = sorted(s.name for s in services)
    doubt = (
        f" (ScaledObject {scaler} scales it up from zero on demand: certain if "
        f"{SCALED_FROM_ZERO.certain_if})"
        if scaler
        else ""
    )
    return SPEC.finding(
        wl.ref,
        f"{wl.ref.kind} {wl.ref.name} runs 0 replicas, but {len(callers)} workload(s) "
        f"call Service {', '.join(names)}{doubt}",
        severity=Severity.WARNING if scaler else Severity.CRITICAL,
        evidence=(f"spec.replicas is 0; callers: {', '.join(sorted(c.name for c in callers))}"),
        related=[*(s.ref for s in services), *callers],
        params={
            "path": "spec.replicas",
            "replicas": 0,
            "services": names,
            "callers": [c.to_json() for c in sorted(callers)],
        },
    )
