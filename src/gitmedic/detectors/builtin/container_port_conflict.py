"""Two containers of one pod declaring the same port: they share one network namespace.

All containers of a pod, and native sidecars (init containers with
``restartPolicy: Always``), bind ports in the same network namespace, so only
one of them can listen on a given port and protocol; the other fails to bind
and crash-loops (the catalogue's sidecar-port-conflict). Ordinary init
containers run to completion before the app starts and are not judged.

The same number under two protocols (grafana's 9094 TCP and UDP) is no
conflict, and duplicates inside one container are a listing slip, not a
bind conflict; both stay silent. The finding names the later container in pod
order, app containers first and native sidecars last (the sidecar is usually the
one that was added), and the field to restore.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._fields import PlacedContainer, running_containers
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="container-port-conflict",
    description="Two containers of one pod declare the same containerPort and protocol.",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the sidecar's port to its last good value so that each container of the pod "
        "listens on a port of its own."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "two containers of one pod share one network namespace: the pod spec alone proves one "
        "cannot bind"
    ),
    playbooks=("sidecar-port-conflict",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        yield from _conflicts(wl)


def _conflicts(wl: Workload) -> Iterator[Finding]:
    first_owner: dict[tuple[int, str], PlacedContainer] = {}
    for container in _pod_order(wl):
        seen_here: set[tuple[int, str]] = set()
        for index, port in enumerate(container.ports):
            number = port.get("containerPort")
            if not isinstance(number, int) or isinstance(number, bool):
                continue
            key = (number, str(port.get("protocol") or "TCP"))
            if key in seen_here:
                continue
            seen_here.add(key)
            owner = first_owner.setdefault(key, container)
            if owner is not container:
                yield _finding(wl, owner, container, index, key)


def _pod_order(wl: Workload) -> list[PlacedContainer]:
    """App containers in order, then native sidecars: a sidecar is the usual newcomer."""
    running = list(running_containers(wl))
    return [c for c in running if not c.init] + [c for c in running if c.init]


def _finding(
    wl: Workload,
    owner: PlacedContainer,
    other: PlacedContainer,
    port_index: int,
    key: tuple[int, str],
) -> Finding:
    number, protocol = key
    return SPEC.finding(
        wl.ref,
        f"containers {owner.name} and {other.name} both declare port {number}/{protocol}",
        rule="same-port",
        evidence=(
            f"{owner.path}.name={owner.name} and {other.path}.name={other.name} share "
            f"containerPort {number}/{protocol} in one network namespace"
        ),
        params={
            "container": other.name,
            "other_container": owner.name,
            "port": number,
            "protocol": protocol,
            "path": f"{other.path}.ports[{port_index}].containerPort",
        },
    )
