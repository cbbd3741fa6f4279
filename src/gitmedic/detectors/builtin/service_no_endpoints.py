"""A Service with a selector and no ready endpoints, while its workload wants pods (live).

Callers of such a Service get connection refused or time-outs. The detector
stays quiet when the cluster has no Endpoints/EndpointSlices for the Service
(unknown, not zero), when no workload matches the selector (that is
``service-selector-unmatched``), and when every selected workload is scaled to
zero (that is the intent, or the scaled-to-zero detector's business). The pods
behind it and why they are not ready go into the evidence.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="service-no-endpoints",
    description="A Service with a selector has no ready endpoints while the workload it "
    "selects wants replicas.",
    kinds=frozenset(
        {
            "Service",
            "Endpoints",
            "EndpointSlice",
            "Pod",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "ReplicaSet",
        }
    ),
    severity=Severity.CRITICAL,
    remediation="Make the selected pods Ready (see the pod findings) or restore the selector, "
    "targetPort or readiness probe of the last working revision.",
    scope=Scope.LIVE,
    certain_because=(
        "read from the live Endpoints: no ready address while the workload wants pods"
    ),
    playbooks=("service-no-endpoints", "chaos-network", "traffic-flood"),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        if snapshot.ready_endpoints(svc) != 0:
            continue
        workloads = selected_workloads(snapshot, svc, selector)
        wanting = [w for w in workloads if w.replicas is None or w.replicas > 0]
        if not wanting:
            continue
        pods = snapshot.pods_selected_by(svc.namespace, selector)
        wanted_by = ", ".join(str(w.ref) for w in wanting)
        states = ", ".join(_pod_state(p) for p in pods) or "none exist"
        yield SPEC.finding(
            svc.ref,
            f"Service {svc.name} has no ready endpoints",
            evidence=f"selector {_fmt(selector)}; wanted by {wanted_by}; pods: {states}",
            related=[w.ref for w in wanting] + [p.ref for p in pods],
            params={"selector": selector},
        )


def _pod_state(pod: Obj) -> str:
    waiting = [
        str(mapping(mapping(mapping(s).get("state")).get("waiting")).get("reason"))
        for s in as_list(pod.status.get("containerStatuses"))
        if mapping(mapping(s).get("state")).get("waiting")
    ]
    return f"{pod.name} {pod.status.get('phase', '?')}" + (
        f" ({', '.join(waiting)})" if waiting else ""
    )


def _fmt(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
