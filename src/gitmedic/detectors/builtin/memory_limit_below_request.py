"""A container whose memory (or CPU) limit is below its request.

The API server rejects such a pod ("must be less than or equal to memory
limit"), so the workload's controller cannot create any pod: the ReplicaSet
reports FailedCreate and the rollout never progresses. Quantities are compared
exactly (``1Gi`` vs ``1000Mi`` vs ``1e9``); a malformed quantity is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._resources import quantity, resources
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="memory-limit-below-request",
    description="A container's memory or CPU limit is lower than its request "
    "(the API server refuses the pod).",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.CRITICAL,
    remediation="Restore the limit (or the request) of the last working revision so that "
    "limit >= request.",
    scope=Scope.BOTH,
    certain_because=("the API server rejects such a pod: the spec alone proves no pod is created"),
    playbooks=("memory-limit-too-small", "cpu-limit-too-tight"),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        for container in wl.containers():
            for name in ("memory", "cpu"):
                request = quantity(container, "requests", name)
                limit = quantity(container, "limits", name)
                if request is None or limit is None or limit >= request:
                    continue
                shown_request = resources(container, "requests")[name]
                shown_limit = resources(container, "limits")[name]
                yield SPEC.finding(
                    wl.ref,
                    f"container {container.name}: {name} limit {shown_limit} is below its "
                    f"request {shown_request}",
                    rule=f"{name}-limit-below-request",
                    evidence=f"resources.limits.{name}={shown_limit} < "
                    f"resources.requests.{name}={shown_request}",
                    params={
                        "container": container.name,
                        "container_field": container.list_field,
                        "resource": name,
                        "request": str(shown_request),
                        "limit": str(shown_limit),
                    },
                )
