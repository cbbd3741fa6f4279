"""A Service whose selector matches no workload's pods: it can never have endpoints."""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="service-selector-unmatched",
    description="A Service's selector matches the pod labels of no workload in its namespace.",
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation="Restore the selector to the labels of the workload the Service fronts.",
    scope=Scope.BOTH,
    playbooks=("service-selector-mismatch",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        if selected_workloads(snapshot, svc, selector):
            continue
        # The closest workload: the one sharing most selector pairs, to name the drift.
        candidates = snapshot.workloads(svc.namespace)
        best = max(
            candidates,
            key=lambda w: (sum(w.template_labels.get(k) == v for k, v in selector.items()), w.ref),
            default=None,
        )
        shared = best and sum(best.template_labels.get(k) == v for k, v in selector.items())
        params: dict[str, object] = {"selector": selector}
        related = []
        evidence = f"selector {_fmt(selector)} matches no pod template in {svc.namespace}"
        if best is not None and shared:
            mismatched = {k: v for k, v in selector.items() if best.template_labels.get(k) != v}
            params["closest_workload"] = best.ref.to_json()
            params["mismatched"] = mismatched
            params["suggested_selector"] = {
                k: str(best.template_labels[k]) for k in selector if k in best.template_labels
            }
            related.append(best.ref)
            evidence += f"; closest is {best.ref} whose labels differ on {_fmt(mismatched)}"
        yield SPEC.finding(
            svc.ref,
            f"Service {svc.name} selects no pods",
            evidence=evidence,
            related=related,
            params=params,
        )


def _fmt(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
