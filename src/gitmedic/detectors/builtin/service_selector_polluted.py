"""A Service whose selector matches the pods of more than one workload.

Its endpoints then mix pods of different workloads, and a share of the requests
lands on pods that serve something else (SREGym's polluted selector). Severity
follows how different the workloads are: when their containers run different
images they are different programs and the mix is certainly wrong (critical);
when they run the same images it may be a deliberate variant or canary (warning).

The params name the workload the Service most likely fronts (the one named like
the Service, if any) and the labels only that workload carries, so a fix can
narrow the selector without guessing.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="service-selector-polluted",
    description="A Service's selector matches the pods of more than one workload.",
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Narrow the selector (restore the label it lost) so it matches only the pods of the "
        "workload the Service fronts."
    ),
    scope=Scope.BOTH,
    playbooks=("service-selector-polluted",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        workloads = sorted(selected_workloads(snapshot, svc, selector), key=lambda w: w.ref)
        if len(workloads) < 2:
            continue
        images = {_images(w) for w in workloads}
        intended = next((w for w in workloads if w.ref.name == svc.name), None)
        params: dict[str, object] = {
            "selector": selector,
            "workloads": [w.ref.to_json() for w in workloads],
        }
        evidence = f"selector {_fmt(selector)} matches {', '.join(str(w.ref) for w in workloads)}"
        if intended is not None:
            own = _own_labels(intended, [w for w in workloads if w is not intended])
            params["intended_workload"] = intended.ref.to_json()
            params["distinguishing_labels"] = own
            evidence += f"; only {intended.ref} carries {_fmt(own) or 'no extra label'}"
        yield SPEC.finding(
            svc.ref,
            f"Service {svc.name} selects pods of {len(workloads)} workloads",
            severity=Severity.CRITICAL if len(images) > 1 else Severity.WARNING,
            evidence=evidence,
            related=[w.ref for w in workloads],
            params=params,
        )


def _images(wl: Workload) -> tuple[str, ...]:
    return tuple(sorted(str(c.body.get("image", "")) for c in wl.containers(init=False)))


def _own_labels(wl: Workload, others: list[Workload]) -> dict[str, str]:
    """Template labels of ``wl`` that no other workload shares (key and value)."""
    return {
        str(k): str(v)
        for k, v in sorted(wl.template_labels.items())
        if all(o.template_labels.get(k) != v for o in others)
    }


def _fmt(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
