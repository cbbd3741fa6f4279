"""Pods the scheduler cannot place: Pending with FailedScheduling.

A pod is reported when it is Pending and not scheduled (``PodScheduled`` is not
True) and either a ``FailedScheduling`` event names it, or it has waited longer
than :data:`PENDING_AFTER_S` (measured against the newest timestamp in the
snapshot, never the clock). The scheduler's message (from the event, else the
PodScheduled condition) is classified into a rule, in this order of precedence:

- ``unbound-pvc``: unbound immediate PersistentVolumeClaims / a PVC not found,
- ``node-selector``: didn't match Pod's node affinity/selector,
- ``anti-affinity``: didn't match pod (anti-)affinity rules,
- ``insufficient-resources``: Insufficient memory / cpu / pods / ephemeral-storage,
- ``host-port``: didn't have free ports for the requested pod ports,
- ``taint``: untolerated taints,
- ``unschedulable``: anything else.

The scheduler lists several reasons per node group; every class found is in
``params.reasons`` and the first by precedence names the rule.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import (
    age_seconds,
    current_pods,
    event_message,
    latest_event,
)
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="pod-unschedulable",
    description="A pod stays Pending because the scheduler cannot place it "
    "(resources, node selector, PVC, affinity).",
    kinds=frozenset({"Pod", "Event", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    severity=Severity.CRITICAL,
    remediation="Restore the field the scheduler message points at (nodeSelector, affinity, "
    "resource requests, claimName) to its last working value.",
    scope=Scope.LIVE,
    certain_because=("read from the pod's live status and the scheduler's events"),
    playbooks=("pod-unschedulable", "node-fault"),
)
PENDING_AFTER_S = 300.0  # a pod unscheduled this long without an event is stuck
_CLASSES = (
    (
        "unbound-pvc",
        re.compile(
            r"unbound immediate PersistentVolumeClaim|persistentvolumeclaim "
            r"\"[^\"]+\" not found|volume node affinity conflict",
            re.I,
        ),
    ),
    ("node-selector", re.compile(r"didn't match (Pod's )?node (affinity|selector)", re.I)),
    (
        "anti-affinity",
        re.compile(r"didn't (match|satisfy) (existing )?pods? (anti-)?affinity", re.I),
    ),
    ("insufficient-resources", re.compile(r"Insufficient \S+", re.I)),
    ("host-port", re.compile(r"free ports", re.I)),
    ("taint", re.compile(r"taint", re.I)),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    stuck: dict[tuple[Resource, str], list[tuple[Obj, str]]] = defaultdict(list)
    for pod in current_pods(snapshot):
        message = _stuck_message(snapshot, pod)
        if message is not None:
            stuck[(snapshot.owner_workload(pod), classify(message)[0])].append((pod, message))
    for (workload, rule), pods in sorted(stuck.items()):
        yield _finding(workload, rule, sorted(pods, key=lambda p: p[0].name))


def classify(message: str) -> list[str]:
    found = [name for name, pattern in _CLASSES if pattern.search(message)]
    return found or ["unschedulable"]


def _stuck_message(snapshot: Snapshot, pod: Obj) -> str | None:
    if pod.status.get("phase") != "Pending" or _scheduled(pod):
        return None
    event = latest_event(snapshot, pod, ("FailedScheduling",))
    condition = _condition(pod)
    message = event_message(event) or str(condition.get("message", ""))
    if event is not None:
        return message
    age = age_seconds(snapshot, pod.metadata.get("creationTimestamp"))
    return message if age is not None and age >= PENDING_AFTER_S else None


def _scheduled(pod: Obj) -> bool:
    return bool(pod.spec.get("nodeName")) or _condition(pod).get("status") == "True"


def _condition(pod: Obj) -> JSON:
    for cond in as_list(pod.status.get("conditions")):
        if mapping(cond).get("type") == "PodScheduled":
            return mapping(cond)
    return {}


def _finding(workload: Resource, rule: str, pods: list[tuple[Obj, str]]) -> Finding:
    message = pods[0][1].strip()
    return SPEC.finding(
        workload,
        f"{len(pods)} pod(s) cannot be scheduled ({rule})",
        rule=rule,
        evidence=f"pods {', '.join(p.name for p, _ in pods)}: {message[:400] or 'no message'}",
        related=[p.ref for p, _ in pods],
        params={"reasons": classify(message)},
    )
