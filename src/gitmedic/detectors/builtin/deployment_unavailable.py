"""Deployments and StatefulSets that do not have the pods they want, persistently.

Rules, from the workload's own status (live):

- ``progress-deadline-exceeded``: a Deployment whose Progressing condition is
  False with reason ProgressDeadlineExceeded. The controller has given up on
  the rollout; the new revision will not come up by itself. Critical when no
  replica is available, warning while old pods still serve.
- ``unavailable``: fewer available replicas than wanted and the Available
  condition False (Deployment), or, for a StatefulSet (which has no such
  condition), fewer ready replicas than wanted while a selected pod has been
  not Ready for longer than :data:`NOT_READY_AFTER_S` (against the newest
  timestamp in the snapshot). Critical when none is available.

A workload scaled to zero wants nothing and is never reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import age_seconds
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="deployment-unavailable",
    description="A Deployment or StatefulSet has fewer available replicas than it wants "
    "(Available=False or ProgressDeadlineExceeded).",
    kinds=frozenset({"Deployment", "StatefulSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation="Find why the new pods fail (the pod findings name it) and restore the field "
    "of the last working revision, or revert the rollout's commit.",
    scope=Scope.LIVE,
    certain_because=("read from the workload's own live status: no replica is available"),
    playbooks=(
        "deployment-unavailable",
        "node-fault",
        "node-not-ready",  # a runtime lever: keep the pods off a NotReady node
        "chaos-pod-kill",
        "chaos-network",
        "traffic-flood",
        "lock-contention",
        "pod-wedged",
    ),
)
NOT_READY_AFTER_S = 600.0


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for obj in snapshot.of_kind("Deployment"):
        yield from _deployment(obj)
    for obj in snapshot.of_kind("StatefulSet"):
        yield from _statefulset(snapshot, obj)


def _deployment(obj: Obj) -> Iterator[Finding]:
    wanted, available = _wanted(obj), _count(obj.status, "availableReplicas")
    if wanted == 0:
        return
    progressing, available_cond = _condition(obj, "Progressing"), _condition(obj, "Available")
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        yield _finding(obj, "progress-deadline-exceeded", wanted, available, progressing)
    elif available < wanted and available_cond.get("status") == "False":
        yield _finding(obj, "unavailable", wanted, available, available_cond)


def _statefulset(snapshot: Snapshot, obj: Obj) -> Iterator[Finding]:
    wanted = _wanted(obj)
    ready = _count(obj.status, "availableReplicas", "readyReplicas")
    if wanted == 0 or ready >= wanted:
        return
    selector = {
        str(k): str(v)
        for k, v in mapping(mapping(obj.spec.get("selector")).get("matchLabels")).items()
    }
    stale = [
        p for p in snapshot.pods_selected_by(obj.namespace, selector) if _long_unready(snapshot, p)
    ]
    if stale:
        yield _finding(obj, "unavailable", wanted, ready, _condition(stale[0], "Ready"))


def _long_unready(snapshot: Snapshot, pod: Obj) -> bool:
    ready = _condition(pod, "Ready")
    if ready.get("status") == "True":
        return False
    since = ready.get("lastTransitionTime") or pod.metadata.get("creationTimestamp")
    age = age_seconds(snapshot, since)
    return age is not None and age >= NOT_READY_AFTER_S


def _finding(obj: Obj, rule: str, wanted: int, available: int, condition: JSON) -> Finding:
    message = str(condition.get("message", "")).strip()
    return SPEC.finding(
        obj.ref,
        f"{obj.kind} {obj.name} has {available}/{wanted} replicas available"
        + (" (rollout past its progress deadline)" if rule == "progress-deadline-exceeded" else ""),
        rule=rule,
        severity=Severity.CRITICAL if available == 0 else Severity.WARNING,
        evidence=f"{condition.get('type', 'condition')}={condition.get('status', '?')} "
        f"{condition.get('reason', '')}: {message[:300]}".strip(),
        params={"reason": str(condition.get("reason") or rule)},
    )


def _wanted(obj: Obj) -> int:
    value = obj.spec.get("replicas", 1)
    return value if isinstance(value, int) else 1


def _count(status: JSON, *keys: str) -> int:
    for key in keys:
        if isinstance(status.get(key), int):
            return int(status[key])
    return 0


def _condition(obj: Obj, kind: str) -> JSON:
    for cond in as_list(obj.status.get("conditions")):
        if mapping(cond).get("type") == kind:
            return mapping(cond)
    return {}
