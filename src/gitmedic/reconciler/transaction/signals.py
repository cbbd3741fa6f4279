"""The critical signals a measurement records: findings and alerts, with the objects they are on.

Fail fast (:func:`~gitmedic.reconciler.transaction.verdict.fail_fast`) undoes a
candidate for what it caused on what it changed, so each signal carries every
object it can be blamed on: a finding's own object and its related ones (a
crash-looping workload's pods), the workload owning a pod, and what a workload's
pod template references (its ConfigMaps, Secrets, PVCs, ServiceAccount), so a
candidate that changed a ConfigMap is answerable for the workload that reads it;
an alert's objects come from its labels (``deployment``, ``pod``, ``service``...).

A signal is keyed as the checkpoint recorded what fired: a finding by its
detector and object (:func:`firing_key`), an alert by its problem line (the
alerts oracle's baseline), so "absent at the checkpoint" is a lookup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gitmedic.detectors.builtin._references import references
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.oracles import FiringAlert, Observation, problems
from gitmedic.reconciler.transaction.window import Signal

# Alert labels that name an object (kube-state-metrics' and kube-prometheus' conventions).
_LABEL_KINDS = {
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "daemonset": "DaemonSet",
    "service": "Service",
    "pod": "Pod",
}


def firing_key(finding: Finding) -> str:
    """What a plan's ``firing`` records of a finding: its detector on its object."""
    return f"{finding.detector} {finding.resource}"


def caused_key(finding: Mapping[str, Any]) -> str:
    """:func:`firing_key` of a finding in its JSON form (a transaction's ``caused``)."""
    return firing_key(Finding.from_json(finding))


def critical_signals(
    snapshot: Snapshot, findings: Iterable[Finding], alerts: Iterable[FiringAlert]
) -> tuple[Signal, ...]:
    """The critical findings and critical alerts firing, each with the objects it is on."""
    out = [
        Signal(firing_key(f), _names(_finding_objects(snapshot, f)))
        for f in findings
        if f.severity is Severity.CRITICAL
    ]
    out += [
        Signal(alert_key(a), _names(_alert_objects(snapshot, a)))
        for a in alerts
        if a.severity.lower() == "critical"
    ]
    return tuple(sorted(set(out), key=lambda s: s.key))


def alert_key(alert: FiringAlert) -> str:
    """The alert as the alerts oracle's baseline names it (one problem line)."""
    (key,) = problems(Observation(alerts=(alert,)))
    return key


def _finding_objects(snapshot: Snapshot, finding: Finding) -> list[Resource]:
    found = [finding.resource, *finding.related]
    for ref in list(found):
        found += _around(snapshot, ref)
    return found


def _alert_objects(snapshot: Snapshot, alert: FiringAlert) -> list[Resource]:
    labels = dict(alert.labels)
    namespace = labels.get("namespace", "")
    found = [
        Resource(kind, namespace, labels[key])
        for key, kind in _LABEL_KINDS.items()
        if labels.get(key)
    ]
    for ref in list(found):
        found += _around(snapshot, ref)
    return found


def _around(snapshot: Snapshot, ref: Resource) -> list[Resource]:
    """The workload owning a pod, and what a workload references."""
    out: list[Resource] = []
    if ref.kind == "Pod":
        pod = snapshot.get("Pod", ref.namespace, ref.name)
        if pod is not None:
            out.append(snapshot.owner_workload(pod))
    for workload_ref in (ref, *out):
        workload = snapshot.workload(workload_ref)
        if workload is not None:
            out += [Resource(r.kind, ref.namespace, r.name) for r in references(workload)]
    return out


def _names(objects: Sequence[Resource]) -> tuple[str, ...]:
    return tuple(sorted({str(o) for o in objects}))
