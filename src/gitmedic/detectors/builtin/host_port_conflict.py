"""Host ports that cannot all be bound: pods stay Pending.

A ``hostPort`` (or any container port of a ``hostNetwork`` pod) is a port on
the node, so at most one pod per node can hold it. Rules:

- ``host-port-shared``: two workloads (in any namespaces: the node is shared)
  claim the same host port and protocol on overlapping host IPs (an unset
  ``hostIP`` or ``0.0.0.0`` overlaps every address). When the snapshot knows
  the nodes, only workloads that can land on a common node conflict. Every
  workload of the group gets a finding naming the others, since the snapshot
  cannot tell which one arrived last (the bisect can).
- ``host-port-replicas`` (only when the snapshot knows the nodes): more
  replicas than nodes the workload may run on; the surplus never schedules.

Workloads are grouped through an index on (port, protocol); no pair of
unrelated workloads is ever compared.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.builtin._fields import PlacedContainer, running_containers
from gitmedic.detectors.builtin._nodes import eligible_nodes
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty

NODES_UNKNOWN = Uncertainty(
    id="nodes-unknown",
    unseen="the nodes (desired state without Node objects): pods of two workloads "
    "on different nodes each bind the port",
    certain_if="their pods outnumber the nodes they may share, or one is a DaemonSet",
)

SPEC = DetectorSpec(
    id="host-port-conflict",
    description=(
        "A hostPort is claimed by more than one workload, or by more replicas than there "
        "are nodes, so some pods can never be scheduled."
    ),
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod", "Node"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the hostPort to its last good value (usually none: reach the pod through a "
        "Service), or keep replicas at most the number of nodes that can run it."
    ),
    scope=Scope.BOTH,
    playbooks=("host-port-conflict",),
    uncertain_when=(NODES_UNKNOWN,),
)

_WILDCARD = frozenset({"", "0.0.0.0", "::"})


@dataclass(frozen=True)
class HostPort:
    workload: Workload
    container: PlacedContainer
    port_index: int
    port: int
    protocol: str
    host_ip: str

    @property
    def path(self) -> str:
        return f"{self.container.path}.ports[{self.port_index}].hostPort"


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    by_port: dict[tuple[int, str], list[HostPort]] = defaultdict(list)
    for wl in snapshot.workloads():
        claims = list(host_ports(wl))
        for claim in claims:
            by_port[(claim.port, claim.protocol)].append(claim)
        if claims:
            yield from _too_many_replicas(snapshot, wl, claims[0])
    for key in sorted(by_port):
        yield from _shared(snapshot, by_port[key])


def host_ports(wl: Workload) -> Iterator[HostPort]:
    host_network = wl.pod_spec.get("hostNetwork") is True
    for container in running_containers(wl):
        for index, port in enumerate(container.ports):
            number = port.get("hostPort")
            if host_network and number is None:
                number = port.get("containerPort")
            if isinstance(number, int) and not isinstance(number, bool) and number > 0:
                protocol = str(port.get("protocol") or "TCP")
                host_ip = str(port.get("hostIP") or "")
                yield HostPort(wl, container, index, number, protocol, host_ip)


def _shared(snapshot: Snapshot, claims: list[HostPort]) -> Iterator[Finding]:
    owners = {c.workload.ref for c in claims}
    if len(owners) < 2:
        return
    # Only claims on one port are compared, and each claim's nodes are computed once.
    nodes = {id(c): _node_names(snapshot, c.workload) for c in claims}
    for claim in claims:
        rivals = [
            c
            for c in claims
            if c.workload.ref != claim.workload.ref
            and _overlap(claim, c, nodes[id(claim)], nodes[id(c)])
        ]
        if rivals:
            known = nodes[id(claim)] is not None and all(nodes[id(r)] is not None for r in rivals)
            yield _shared_finding(claim, rivals, certain=known or _on_every_node(claim, rivals))


def _on_every_node(claim: HostPort, rivals: list[HostPort]) -> bool:
    """A DaemonSet holds the port on every node it runs on: nowhere is left for the other."""
    return any(c.workload.obj.kind == "DaemonSet" for c in [claim, *rivals])


def _node_names(snapshot: Snapshot, wl: Workload) -> frozenset[str] | None:
    nodes = eligible_nodes(snapshot, wl.pod_spec)
    return None if nodes is None else frozenset(n.name for n in nodes)


def _overlap(
    a: HostPort, b: HostPort, nodes_a: frozenset[str] | None, nodes_b: frozenset[str] | None
) -> bool:
    ips = {a.host_ip, b.host_ip}
    if len(ips) > 1 and not ips & _WILDCARD:
        return False
    return nodes_a is None or nodes_b is None or bool(nodes_a & nodes_b)


def _shared_finding(claim: HostPort, rivals: list[HostPort], *, certain: bool) -> Finding:
    names = sorted({str(r.workload.ref) for r in rivals})
    doubt = "" if certain else f" (the nodes are unknown: certain if {NODES_UNKNOWN.certain_if})"
    return SPEC.finding(
        claim.workload.ref,
        f"{claim.container.name}: hostPort {claim.port}/{claim.protocol} is also claimed by "
        + ", ".join(names)
        + doubt,
        rule="host-port-shared",
        severity=Severity.CRITICAL if certain else Severity.WARNING,
        evidence=f"{claim.path}={claim.port}; also claimed by {', '.join(names)}",
        related=[r.workload.ref for r in rivals],
        params={
            "container": claim.container.name,
            "port": claim.port,
            "protocol": claim.protocol,
            "path": claim.path,
        },
    )


def _too_many_replicas(snapshot: Snapshot, wl: Workload, claim: HostPort) -> Iterator[Finding]:
    nodes = eligible_nodes(snapshot, wl.pod_spec)
    if nodes is None or wl.replicas is None or wl.replicas <= len(nodes):
        return
    yield SPEC.finding(
        wl.ref,
        f"{wl.ref.name}: {wl.replicas} replicas need hostPort {claim.port}/{claim.protocol} "
        f"but only {len(nodes)} node(s) can run them",
        rule="host-port-replicas",
        evidence=(
            f"{claim.path}={claim.port}; replicas={wl.replicas}; eligible nodes: "
            f"{sorted(n.name for n in nodes)}"
        ),
        params={
            "container": claim.container.name,
            "port": claim.port,
            "protocol": claim.protocol,
            "path": claim.path,
            "replicas": wl.replicas,
            "nodes": len(nodes),
        },
    )
