"""Pods stuck initialising: an init container that never finishes or keeps failing.

Init containers run one after another; only the first one that has not
completed is judged (the later ones wait for it by design). It is stuck when

- it has restarted (``init-restarting``: at least :data:`MIN_RESTARTS`
  restarts, or CrashLoopBackOff): it fails every time;
- it has been running longer than :data:`INIT_STUCK_AFTER_S`
  (``init-running``): typically waiting for a service that does not exist;
- it has been waiting to start that long (``init-waiting``), measured from the
  pod's start.

Ages are measured against the newest timestamp in the snapshot. Sidecar
containers (init containers with ``restartPolicy: Always``) run for the pod's
life by design and are skipped; image-pull and config errors are left to
``pod-image-pull`` and ``pod-config-error``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import (
    ContainerState,
    Group,
    age_seconds,
    container_states,
    current_pods,
)
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="pod-init-stuck",
    description="An init container runs, waits or restarts far longer than initialisation "
    "should take (Init:0/1 forever).",
    kinds=frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    severity=Severity.CRITICAL,
    remediation="Check what the init container waits for (a Service, a host, a file) and "
    "restore the name or address of the last working revision.",
    scope=Scope.LIVE,
    certain_because=("read from the pod's live status (an init container that never finishes)"),
    playbooks=("init-container-hang",),
)
INIT_STUCK_AFTER_S = 600.0  # initialisation that takes 10 minutes is not going to finish
MIN_RESTARTS = 2
_OTHER_DETECTORS = frozenset(
    {
        "ImagePullBackOff",
        "ErrImagePull",
        "InvalidImageName",
        "CreateContainerConfigError",
        "CreateContainerError",
    }
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    groups: dict[tuple[Resource, str, str], list[tuple[ContainerState, float | None]]] = {}
    for pod in current_pods(snapshot):
        judged = _current_init(pod)
        if judged is None:
            continue
        rule, age = _stuck(snapshot, judged)
        if rule:
            key = (snapshot.owner_workload(pod), judged.name, rule)
            groups.setdefault(key, []).append((judged, age))
    for (workload, container, rule), found in sorted(groups.items()):
        found.sort(key=lambda f: f[0].pod.name)
        group = Group(workload, container, rule, tuple(s for s, _ in found))
        yield _finding(group, [a for _, a in found])


def _current_init(pod: Obj) -> ContainerState | None:
    """The first init container that has not completed, unless it is a sidecar."""
    if pod.status.get("phase") not in ("Pending", None):
        return None
    for state in container_states(pod, init=True):
        if state.spec.get("restartPolicy") == "Always":
            continue
        if state.terminated.get("exitCode") == 0:
            continue
        return state
    return None


def _stuck(snapshot: Snapshot, state: ContainerState) -> tuple[str | None, float | None]:
    waiting = str(state.waiting.get("reason", ""))
    if waiting in _OTHER_DETECTORS:
        return None, None
    if state.restarts >= MIN_RESTARTS or waiting == "CrashLoopBackOff":
        return "init-restarting", None
    if state.running:
        age = age_seconds(snapshot, state.running.get("startedAt"))
        return ("init-running" if age is not None and age >= INIT_STUCK_AFTER_S else None), age
    age = age_seconds(snapshot, state.pod.status.get("startTime"))
    return ("init-waiting" if age is not None and age >= INIT_STUCK_AFTER_S else None), age


def _finding(group: Group, ages: list[float | None]) -> Finding:
    last = group.first.last_terminated or group.first.terminated
    details = [
        f"{s.pod.name} (restarts {s.restarts}{f', for {int(a)}s' if a is not None else ''})"
        for s, a in zip(group.states, ages, strict=True)
    ]
    evidence = f"pods {', '.join(details)}"
    if last:
        evidence += f"; last run ended {last.get('reason')} with exit code {last.get('exitCode')}"
    verb = {"init-restarting": "keeps failing", "init-running": "never finishes"}
    return SPEC.finding(
        group.workload,
        f"init container {group.container} {verb.get(group.rule, 'never starts')}",
        rule=group.rule,
        evidence=evidence,
        related=group.pods,
        params={
            "container": group.container,
            "container_field": "initContainers",
            "last_termination_reason": str(last.get("reason") or "") or None,
        },
    )
