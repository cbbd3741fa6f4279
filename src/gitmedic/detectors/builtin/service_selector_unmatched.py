"""A Service whose selector matches no workload's pods: it can never have endpoints.

Pods count whoever owns them: every workload kind (ReplicationController and
Argo Rollout included), with the labels their controllers add (a StatefulSet
pod's ``statefulset.kubernetes.io/pod-name``), and in live state the pods
themselves. Critical only when that is certain. In desired state it is not when

- a custom resource of the namespace may own pods its operator creates (a
  ``Prometheus``, ``Alertmanager``, an unknown CR): a warning naming them;
- no workload of the app shares even one selector pair, nor is named like the
  Service (or labelled with its name): the pods may run outside the repository
  (a cluster add-on's DaemonSet, another app): a warning. A selector that
  drifted from a workload of the app (shares some pairs, or the workload is the
  Service's namesake: ``frontend`` selecting ``app: frontend-v2``) stays critical.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import (
    custom_pod_owners,
    named,
    selected_workloads,
    selecting_services,
)
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import WORKLOAD_KINDS, Obj, Snapshot, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty

CUSTOM_OWNER = Uncertainty(
    id="pods-from-custom-resource",
    unseen="pods an operator creates from a custom resource of the namespace",
    certain_if="the operator's pods do not carry the selector's labels, as a live check shows",
)
OUTSIDE_APP = Uncertainty(
    id="pods-outside-app",
    unseen="pods run outside the repository (a cluster add-on's DaemonSet, another app)",
    certain_if="no pod of the namespace carries the selector's labels, as a live check shows, or a "
    "workload of the app is named like the Service",
)

SPEC = DetectorSpec(
    id="service-selector-unmatched",
    description="A Service's selector matches the pod labels of no workload in its namespace.",
    kinds=frozenset({"Service", *WORKLOAD_KINDS}),
    severity=Severity.CRITICAL,
    remediation="Restore the selector to the labels of the workload the Service fronts.",
    scope=Scope.BOTH,
    playbooks=("service-selector-mismatch",),
    uncertain_when=(CUSTOM_OWNER, OUTSIDE_APP),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        if selected_workloads(snapshot, svc, selector):
            continue
        if snapshot.live and snapshot.pods_selected_by(svc.namespace, selector):
            continue  # pods of an owner the snapshot does not model are still its endpoints
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
        drifted = bool(related) or _named_for_a_workload(snapshot, svc)
        severity, summary = _certainty(snapshot, svc, drifted=drifted)
        yield SPEC.finding(
            svc.ref,
            summary,
            severity=severity,
            evidence=evidence,
            related=related,
            params=params,
        )


def _named_for_a_workload(snapshot: Snapshot, svc: Obj) -> bool:
    """A workload of the app is named like the Service, or carries its name as a label value
    (``app: frontend``): the Service fronts it, and a selector matching nothing drifted."""
    return any(
        w.ref.name == svc.name or svc.name in {str(v) for v in w.template_labels.values()}
        for w in snapshot.workloads(svc.namespace)
    )


def _hints(svc: Obj) -> frozenset[str]:
    selector = mapping(svc.spec.get("selector"))
    return frozenset({svc.name, *(str(v).lower() for v in selector.values())})


def _certainty(snapshot: Snapshot, svc: Obj, *, drifted: bool) -> tuple[Severity, str]:
    """Critical when the snapshot proves no pod matches; else a warning saying why not."""
    plain = f"Service {svc.name} selects no pods"
    if snapshot.live:
        return Severity.CRITICAL, plain
    owners = custom_pod_owners(snapshot, svc.namespace)
    if owners:
        return Severity.WARNING, (
            f"{plain} in the manifests; {named(owners, hints=_hints(svc))} may own pods its "
            f"operator creates (certain if {CUSTOM_OWNER.certain_if})"
        )
    if not drifted:
        return Severity.WARNING, (
            f"{plain} of this app; its pods may run outside the repository, such as a cluster "
            f"add-on's DaemonSet (certain if {OUTSIDE_APP.certain_if})"
        )
    return Severity.CRITICAL, plain


def _fmt(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
