"""Placing pods on the three nodes, and the scheduler's reasons when it cannot.

The filters are the default scheduler's that faults trip: PersistentVolumeClaim
exists and is bound, nodeSelector and required node affinity, requested CPU and
memory against what is left, host ports, and required pod anti-affinity on the
hostname topology. The messages are the scheduler's own
(``0/3 nodes are available: 3 Insufficient memory. preemption: ...``), because
detectors and people match on them.

Among feasible nodes a pod goes to the one holding fewest pods of its workload
(the default spreading), ties broken by a hash of the pod's name: placements stay
stable while other pods come and go.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from gitmedic.detectors.quantity import millicores, whole_bytes
from gitmedic.detectors.snapshot import as_list, mapping, selector_matches
from gitmedic.sim import ids
from gitmedic.sim.nodes import Node

NOT_READY = "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"


@dataclass(frozen=True)
class PodRequest:
    name: str
    owner: str  # the workload key; pods of one owner spread over nodes
    labels: Mapping[str, str]
    spec: Mapping[str, Any]
    claims: Mapping[str, str]  # claimName -> "" when bound, else the problem
    created: float = 0.0  # a pod bound before its node went NotReady keeps its place

    @cached_property
    def requests(self) -> tuple[int, int]:
        """(cpu millicores, memory bytes), read once however many nodes are tried."""
        return requests_of(self.spec)

    @cached_property
    def host_ports(self) -> set[int]:
        return _host_ports(self.spec)


@dataclass
class NodeLoad:
    node: Node
    cpu_m: int = 0
    memory: int = 0
    host_ports: set[int] = field(default_factory=set)
    pods: list[PodRequest] = field(default_factory=list)


@dataclass(frozen=True)
class Placement:
    node: str | None
    message: str = ""  # FailedScheduling message when node is None


class Scheduler:
    def __init__(self, nodes: Sequence[Node], down: Mapping[str, float] | None = None) -> None:
        self.loads = [NodeLoad(n) for n in nodes]
        self.down = dict(down or {})  # node -> NotReady since (sim.node_faults)

    def place(self, pod: PodRequest) -> Placement:
        claim_problem = next((p for p in pod.claims.values() if p), "")
        if claim_problem:
            return Placement(None, _message(len(self.loads), Counter({claim_problem: 0})))
        reasons: Counter[str] = Counter()
        feasible: list[NodeLoad] = []
        for load in self.loads:
            since = self.down.get(load.node.name)
            reason = NOT_READY if since is not None and pod.created >= since else _unfit(load, pod)
            if reason:
                reasons[reason] += 1
            else:
                feasible.append(load)
        if not feasible:
            return Placement(None, _message(len(self.loads), reasons))
        best = min(
            feasible,
            key=lambda ld: (
                sum(p.owner == pod.owner for p in ld.pods),
                ids.unit(pod.name, ld.node.name),
            ),
        )
        _take(best, pod)
        return Placement(best.node.name)

    def release(self, pod_name: str) -> None:
        """Undo a placement (a pod the controller decided not to keep after all)."""
        for load in self.loads:
            for pod in [p for p in load.pods if p.name == pod_name]:
                cpu, mem = pod.requests
                load.cpu_m -= cpu
                load.memory -= mem
                load.host_ports -= pod.host_ports
                load.pods.remove(pod)


def requests_of(spec: Mapping[str, Any]) -> tuple[int, int]:
    cpu = mem = 0
    for c in as_list(spec.get("containers")):
        req = mapping(mapping(mapping(c).get("resources")).get("requests"))
        cpu += millicores(req.get("cpu")) or 0
        mem += whole_bytes(req.get("memory")) or 0
    return cpu, mem


def _host_ports(spec: Mapping[str, Any]) -> set[int]:
    return {
        int(p["hostPort"])
        for c in as_list(spec.get("containers"))
        for p in as_list(mapping(c).get("ports"))
        if isinstance(mapping(p).get("hostPort"), int)
    }


def _unfit(load: NodeLoad, pod: PodRequest) -> str:
    labels = load.node.labels
    selector = {str(k): str(v) for k, v in mapping(pod.spec.get("nodeSelector")).items()}
    if selector and not selector_matches(selector, labels):
        return "node(s) didn't match Pod's node affinity/selector"
    if not _node_affinity_ok(pod.spec, labels):
        return "node(s) didn't match Pod's node affinity/selector"
    cpu, mem = pod.requests
    if mem > load.node.allocatable_memory - load.memory:
        return "Insufficient memory"
    if cpu > load.node.allocatable_cpu_m - load.cpu_m:
        return "Insufficient cpu"
    if pod.host_ports & load.host_ports:
        return "node(s) didn't have free ports for the requested pod ports"
    if _anti_affinity_blocks(pod, load):
        return "node(s) didn't match pod anti-affinity rules"
    return ""


def _take(load: NodeLoad, pod: PodRequest) -> None:
    cpu, mem = pod.requests
    load.cpu_m += cpu
    load.memory += mem
    load.host_ports |= pod.host_ports
    load.pods.append(pod)


def _node_affinity_ok(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    required = mapping(
        mapping(mapping(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    terms = [mapping(t) for t in as_list(required.get("nodeSelectorTerms"))]
    if not terms:
        return True
    return any(
        all(expression_matches(mapping(e), labels) for e in as_list(t.get("matchExpressions")))
        for t in terms
    )


def expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(expr.get("key", "")), str(expr.get("operator", ""))
    values = {str(v) for v in as_list(expr.get("values"))}
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def label_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A full LabelSelector (matchLabels and matchExpressions); empty selects everything."""
    match = {str(k): str(v) for k, v in mapping(selector.get("matchLabels")).items()}
    if any(labels.get(k) != v for k, v in match.items()):
        return False
    return all(
        expression_matches(mapping(e), labels) for e in as_list(selector.get("matchExpressions"))
    )


def _anti_affinity_blocks(pod: PodRequest, load: NodeLoad) -> bool:
    anti = mapping(mapping(pod.spec.get("affinity")).get("podAntiAffinity"))
    for term in as_list(anti.get("requiredDuringSchedulingIgnoredDuringExecution")):
        term = mapping(term)
        if term.get("topologyKey") != "kubernetes.io/hostname":
            continue
        selector = mapping(term.get("labelSelector"))
        if any(label_selector_matches(selector, other.labels) for other in load.pods):
            return True
    return False


def _message(total: int, reasons: Counter[str]) -> str:
    if any(count == 0 for count in reasons.values()):  # a pod-level problem, not per node
        (problem,) = reasons
        parts = problem
    else:
        parts = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    return (
        f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: "
        f"{total} Preemption is not helpful for scheduling."
    )
