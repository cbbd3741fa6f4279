"""A CPU-utilisation HPA over containers without CPU requests: it cannot compute usage.

Utilisation is usage divided by request, so the HPA controller reports
``FailedGetResourceMetric: missing request for cpu`` and stops scaling
(``ScalingActive=False``) when any container it reads has no CPU request. A
request is present if the container sets ``requests.cpu``, or ``limits.cpu``
(the request defaults to the limit), or a LimitRange of the namespace supplies
a default. Init containers do not run alongside and are not read.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._hpa import cpu_utilisation_containers, target_ref
from gitmedic.detectors.builtin._resources import effective_request
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="hpa-no-cpu-request",
    description="A CPU-utilisation HorizontalPodAutoscaler targets a workload whose "
    "containers have no CPU request.",
    kinds=frozenset(
        {"HorizontalPodAutoscaler", "Deployment", "StatefulSet", "ReplicaSet", "LimitRange"}
    ),
    severity=Severity.WARNING,
    remediation="Restore the containers' resources.requests.cpu of the last working revision.",
    scope=Scope.BOTH,
    certain_because=("never critical (a warning)"),
    playbooks=("hpa-no-cpu-request",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for hpa in snapshot.of_kind("HorizontalPodAutoscaler"):
        read = cpu_utilisation_containers(hpa)
        target = target_ref(hpa)
        workload = snapshot.workload(target) if target else None
        if read is None or workload is None:
            continue
        lacking = [
            c.name
            for c in workload.containers(init=False)
            if (None in read or c.name in read)
            and not effective_request(snapshot, workload.obj.namespace, c, "cpu")
        ]
        if not lacking:
            continue
        yield SPEC.finding(
            workload.ref,
            f"HPA {hpa.name} scales on CPU utilisation but container(s) {', '.join(lacking)} "
            "have no CPU request",
            evidence=f"{hpa.ref} targets {workload.ref}; without resources.requests.cpu the "
            "HPA reports 'missing request for cpu' and stops scaling",
            related=[hpa.ref],
            params={"hpa": hpa.name, "containers": lacking},
        )
