"""Required anti-affinity against its own pods with more replicas than domains: Pending.

A required pod anti-affinity term that selects the workload's own pods admits
one pod per topology domain (per node for ``kubernetes.io/hostname``). With
more replicas than domains among the nodes the pods may run on, the surplus
pods can never be scheduled (the catalogue's anti-affinity-deadlock).

The number of domains needs the cluster's nodes, so this rule judges only
snapshots that hold Node objects (always in live mode; in desired state when
the repo describes its nodes, see :mod:`._nodes`); otherwise it is silent.
Domains are the distinct values of the topology key among the eligible nodes
(schedulable, taints tolerated, nodeSelector and node affinity matched); if
any eligible node lacks the key, pods fit there without limit and the rule is
silent.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._affinity import self_exclusive_terms
from gitmedic.detectors.builtin._fields import pod_spec_path
from gitmedic.detectors.builtin._nodes import Node, eligible_nodes
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="anti-affinity-deadlock",
    description=(
        "Required pod anti-affinity against the workload's own pods allows fewer pods than "
        "its replicas, given the nodes it may run on."
    ),
    kinds=frozenset({"Deployment", "StatefulSet", "ReplicaSet", "Node"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore replicas or the anti-affinity to their last good values: keep replicas at "
        "most the number of topology domains, or make the term preferred instead of required."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "judged only against the Node objects the snapshot holds (live, or the repo's own node "
        "list): more replicas than topology domains among them cannot all be placed"
    ),
    playbooks=("anti-affinity-deadlock",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        if wl.replicas is None or wl.replicas < 2:
            continue
        terms = list(self_exclusive_terms(wl))
        nodes = eligible_nodes(snapshot, wl.pod_spec) if terms else None
        if not nodes:
            continue  # unknown nodes, or none at all (node-selector-unmatched's case)
        for index, key in terms:
            capacity = domains(nodes, key)
            if capacity is not None and wl.replicas > capacity:
                yield _finding(wl, index, key, capacity, nodes)


def domains(nodes: tuple[Node, ...], key: str) -> int | None:
    """Distinct values of ``key``; None when some node lacks it (no limit there)."""
    if any(key not in n.labels for n in nodes):
        return None
    return len({n.labels[key] for n in nodes})


def _finding(wl: Workload, index: int, key: str, capacity: int, nodes: tuple[Node, ...]) -> Finding:
    replicas = wl.replicas or 0
    path = (
        f"{pod_spec_path(wl.obj.kind)}.affinity.podAntiAffinity."
        f"requiredDuringSchedulingIgnoredDuringExecution[{index}]"
    )
    return SPEC.finding(
        wl.ref,
        f"{wl.ref.name}: {replicas} replicas, but anti-affinity on {key} admits {capacity}",
        rule="replicas-exceed-domains",
        evidence=(
            f"{path} selects the workload's own pods with topologyKey {key}; "
            f"{len(nodes)} eligible node(s) form {capacity} domain(s); "
            f"{replicas - capacity} pod(s) stay Pending"
        ),
        params={
            "path": "spec.replicas",
            "value": replicas,
            "term_path": path,
            "topology_key": key,
            "domains": capacity,
            "suggested": capacity,
        },
    )
