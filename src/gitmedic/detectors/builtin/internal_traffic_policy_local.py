"""A Service with ``internalTrafficPolicy: Local`` in front of pods not on every node.

With ``Local``, kube-proxy sends a caller's traffic only to endpoints on the
caller's own node. Only a DaemonSet puts a pod on every node; any other workload
(a Deployment, StatefulSet, ReplicaSet or bare Pod) leaves some nodes without a
local endpoint, and callers scheduled there get connection failures (SREGym's
internal-traffic-policy-local). The rule: fire when any workload the Service
selects is not a DaemonSet. Critical when the selected workloads run at most one
pod in total (every other node is sure to miss), warning otherwise (how many
nodes miss depends on scheduling).
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="internal-traffic-policy-local",
    description=(
        "A Service routes in-cluster traffic node-locally (internalTrafficPolicy: Local) "
        "to a workload that does not run on every node."
    ),
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.WARNING,
    remediation=(
        "Set internalTrafficPolicy back to Cluster (or remove it), "
        "or run the backend as a DaemonSet."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "critical only when the selected workloads run at most one pod, so every other node of "
        "a multi-node cluster has no local endpoint"
    ),
    playbooks=("internal-traffic-policy-local",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        if svc.spec.get("internalTrafficPolicy") != "Local":
            continue
        workloads = selected_workloads(snapshot, svc, selector)
        partial = sorted((w for w in workloads if w.obj.kind != "DaemonSet"), key=lambda w: w.ref)
        if not partial:
            continue
        pods = sum(w.replicas or 0 for w in partial)
        yield SPEC.finding(
            svc.ref,
            f"Service {svc.name} is node-local but {', '.join(w.ref.name for w in partial)} "
            f"does not run on every node",
            severity=Severity.CRITICAL if pods <= 1 else Severity.WARNING,
            evidence=(
                "internalTrafficPolicy: Local; "
                + ", ".join(f"{w.ref.kind} {w.ref.name} replicas {w.replicas}" for w in partial)
            ),
            related=[w.ref for w in partial],
            params={
                "path": "spec.internalTrafficPolicy",
                "value": "Local",
                "workloads": [w.ref.to_json() for w in partial],
                "replicas": pods,
            },
        )
