"""Resource requests no node can satisfy: pods stay Pending (Insufficient memory/cpu).

Judged only when the snapshot knows the nodes and their ``status.allocatable``
(``status.capacity`` as a fallback): always in live mode, in desired state when
the repo holds ``kubectl get nodes -o yaml`` output. A resource is judged only
when every node the pod may run on reports it.

A container's request is ``resources.requests``, else its ``limits`` (the API
defaults a missing request to the limit). Rules, for cpu and memory:

- ``container-request``: one container requests more than the largest
  allocatable among the nodes the pod may run on (the catalogue's fault:
  memory request 2x node capacity). The params name that container and field.
- ``pod-request``: no single container does, but the pod as the scheduler
  counts it does: the larger of (app containers + native sidecars) and the
  largest ordinary init container, plus ``spec.overhead``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gitmedic.detectors.builtin._fields import PlacedContainer, placed_containers
from gitmedic.detectors.builtin._nodes import Node, eligible_nodes
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.quantity import try_quantity
from gitmedic.detectors.snapshot import Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="request-too-large",
    description="A pod requests more cpu or memory than any node it may run on can allocate.",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod", "Node"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the container's resource request to its last good value, at most what the "
        "largest node can allocate."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "judged only against the allocatable of the Node objects the snapshot holds: no node "
        "fits the request"
    ),
    playbooks=("request-too-large",),
)

RESOURCES = ("memory", "cpu")


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    # Workloads with the same placement share one tuple of eligible nodes; find its
    # largest node once per tuple, not once per workload.
    largest_of: dict[tuple[int, str], tuple[Node, Decimal] | None] = {}
    for wl in snapshot.workloads():
        nodes = eligible_nodes(snapshot, wl.pod_spec)
        if not nodes:
            continue
        for resource in RESOURCES:
            key = (id(nodes), resource)
            if key not in largest_of:
                largest_of[key] = _largest(nodes, resource)
            largest = largest_of[key]
            if largest is not None:
                yield from _judge(wl, resource, largest)


def request_of(container: PlacedContainer, resource: str) -> tuple[str, object, Decimal] | None:
    """(field, raw value, amount) of a container's effective request for ``resource``."""
    resources = mapping(container.body.get("resources"))
    for field in ("requests", "limits"):
        raw = mapping(resources.get(field)).get(resource)
        amount = try_quantity(raw)
        if amount is not None:
            return field, raw, amount
    return None


def pod_request(wl: Workload, resource: str) -> Decimal:
    """The pod's request as the scheduler counts it."""
    running = Decimal(0)
    init_peak = Decimal(0)
    for container in placed_containers(wl):
        found = request_of(container, resource)
        amount = found[2] if found else Decimal(0)
        if container.init and not container.sidecar:
            init_peak = max(init_peak, amount)
        else:
            running += amount
    overhead = try_quantity(mapping(wl.pod_spec.get("overhead")).get(resource)) or Decimal(0)
    return max(running, init_peak) + overhead


def _largest(nodes: tuple[Node, ...], resource: str) -> tuple[Node, Decimal] | None:
    if any(resource not in n.allocatable for n in nodes):
        return None
    return max(((n, n.allocatable[resource]) for n in nodes), key=lambda p: (p[1], p[0].name))


def _judge(wl: Workload, resource: str, largest: tuple[Node, Decimal]) -> Iterator[Finding]:
    node, capacity = largest
    too_big = False
    for container in placed_containers(wl):
        found = request_of(container, resource)
        if found is not None and found[2] > capacity:
            too_big = True
            yield _container_finding(wl, container, resource, found, node)
    total = pod_request(wl, resource)
    if not too_big and total > capacity:
        yield SPEC.finding(
            wl.ref,
            f"{wl.ref.name}: the pod requests {_fmt(total)} {resource}, "
            "more than any node allocates",
            rule="pod-request",
            evidence=f"pod total {_fmt(total)} > {_fmt(capacity)} allocatable on {node.name}",
            params={
                "resource": resource,
                "requested": _fmt(total),
                "largest_allocatable": _fmt(capacity),
            },
        )


def _container_finding(
    wl: Workload,
    container: PlacedContainer,
    resource: str,
    found: tuple[str, object, Decimal],
    node: Node,
) -> Finding:
    field, raw, _ = found
    path = f"{container.path}.resources.{field}.{resource}"
    allocatable = mapping(node.obj.status.get("allocatable")) or mapping(
        node.obj.status.get("capacity")
    )
    return SPEC.finding(
        wl.ref,
        f"{container.name}: {resource} {field[:-1]} {raw} exceeds every node's allocatable",
        rule="container-request",
        evidence=(
            f"{path}={raw}; largest allocatable {resource} is "
            f"{allocatable.get(resource)} on {node.name}"
        ),
        params={
            "container": container.name,
            "resource": resource,
            "path": path,
            "value": raw,
            "largest_allocatable": allocatable.get(resource),
            "node": node.name,
        },
    )


def _fmt(amount: Decimal) -> str:
    return format(amount.normalize(), "f")
