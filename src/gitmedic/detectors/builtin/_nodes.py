"""The cluster's nodes, as far as the snapshot knows them, and where a pod may run.

How a snapshot knows the nodes: by holding ``Node`` objects. A live snapshot
always lists them. A desired-state snapshot holds them only when the manifest
repo describes its cluster, e.g. a committed ``kubectl get nodes -o yaml``
(a ``kind: List``, which the loader expands). When the snapshot holds no Node,
:func:`cluster_nodes` returns None and every node-dependent rule stays silent:
an unknown cluster is never judged.

A pod may run on a node when the node is schedulable (``spec.unschedulable`` is
treated as the ``node.kubernetes.io/unschedulable:NoSchedule`` taint the node
controller sets for it), the pod tolerates its ``NoSchedule``/``NoExecute``
taints, and the node matches the pod's ``nodeName``, ``nodeSelector`` and
required node affinity. Results are cached per distinct placement, so a
thousand workloads sharing one ``nodeSelector`` cost one pass over the nodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gitmedic.detectors.quantity import try_quantity
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping

HOSTNAME = "kubernetes.io/hostname"
_BLOCKING = frozenset({"NoSchedule", "NoExecute"})
_UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@dataclass(frozen=True)
class Node:
    obj: Obj
    labels: Mapping[str, str]
    taints: tuple[JSON, ...]
    allocatable: Mapping[str, Decimal]  # cpu (cores) and memory (bytes) where known

    @property
    def name(self) -> str:
        return self.obj.name


def cluster_nodes(snapshot: Snapshot) -> tuple[Node, ...] | None:
    """Every Node of the snapshot, or None when the snapshot knows no nodes."""
    nodes = snapshot.derived("nodes.all", lambda: tuple(map(_node, snapshot.of_kind("Node"))))
    return nodes or None


def eligible_nodes(snapshot: Snapshot, pod_spec: JSON) -> tuple[Node, ...] | None:
    """Nodes this pod may be scheduled on; None when the snapshot knows no nodes."""
    nodes = cluster_nodes(snapshot)
    if nodes is None:
        return None
    placement = placement_of(pod_spec)
    key = "nodes.eligible:" + json.dumps(placement, sort_keys=True, default=str)
    return snapshot.derived(key, lambda: tuple(n for n in nodes if _admits(n, placement)))


def nodes_matching_selection(snapshot: Snapshot, pod_spec: JSON) -> tuple[Node, ...] | None:
    """Nodes whose labels satisfy nodeSelector and required affinity (taints ignored)."""
    nodes = cluster_nodes(snapshot)
    if nodes is None:
        return None
    placement = {**placement_of(pod_spec), "tolerations": None}
    key = "nodes.selected:" + json.dumps(placement, sort_keys=True, default=str)
    return snapshot.derived(key, lambda: tuple(n for n in nodes if _admits(n, placement)))


def placement_of(pod_spec: JSON) -> dict[str, Any]:
    """The parts of a pod spec that decide which nodes may take it."""
    affinity = mapping(mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    return {
        "nodeName": pod_spec.get("nodeName") or None,
        "nodeSelector": {str(k): str(v) for k, v in mapping(pod_spec.get("nodeSelector")).items()},
        "required": affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
        "tolerations": [mapping(t) for t in as_list(pod_spec.get("tolerations"))],
    }


def selector_term_matches(node: Node, term: JSON) -> bool:
    """One nodeSelectorTerm: all its expressions and fields hold (an empty term matches none)."""
    expressions = [mapping(e) for e in as_list(term.get("matchExpressions"))]
    fields = [mapping(e) for e in as_list(term.get("matchFields"))]
    if not expressions and not fields:
        return False
    return all(_expression_holds(node.labels, e) for e in expressions) and all(
        _expression_holds({"metadata.name": node.name}, f) for f in fields
    )


def required_affinity_matches(node: Node, required: object) -> bool:
    terms = [mapping(t) for t in as_list(mapping(required).get("nodeSelectorTerms"))]
    return any(selector_term_matches(node, t) for t in terms)


def tolerates(tolerations: list[JSON], taint: JSON) -> bool:
    return any(_toleration_matches(t, taint) for t in tolerations)


def _admits(node: Node, placement: Mapping[str, Any]) -> bool:
    if placement["nodeName"] and placement["nodeName"] != node.name:
        return False
    if any(node.labels.get(k) != v for k, v in placement["nodeSelector"].items()):
        return False
    if placement["required"] is not None and not required_affinity_matches(
        node, placement["required"]
    ):
        return False
    if placement["tolerations"] is None:
        return True
    blocking = [t for t in node.taints if t.get("effect") in _BLOCKING]
    return all(tolerates(placement["tolerations"], t) for t in blocking)


def _expression_holds(labels: Mapping[str, str], expr: JSON) -> bool:
    key = str(expr.get("key", ""))
    operator = expr.get("operator")
    values = [str(v) for v in as_list(expr.get("values"))]
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        return _compare_ints(labels[key], values[0], operator)
    return False


def _compare_ints(label: str, bound: str, operator: str) -> bool:
    try:
        left, right = int(label), int(bound)
    except ValueError:
        return False
    return left > right if operator == "Gt" else left < right


def _toleration_matches(toleration: JSON, taint: JSON) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if toleration.get("operator") == "Exists":
        return not key or key == taint.get("key")
    return key == taint.get("key") and str(toleration.get("value", "")) == str(
        taint.get("value", "")
    )


def _node(obj: Obj) -> Node:
    labels = {str(k): str(v) for k, v in obj.labels.items()}
    labels.setdefault(HOSTNAME, obj.name)  # kubelet sets it; hand-written Nodes may not
    taints = [mapping(t) for t in as_list(obj.spec.get("taints"))]
    if obj.spec.get("unschedulable") is True:
        taints.append(_UNSCHEDULABLE)
    return Node(obj, labels, tuple(taints), _allocatable(obj))


def _allocatable(obj: Obj) -> dict[str, Decimal]:
    status = obj.status
    source = mapping(status.get("allocatable")) or mapping(status.get("capacity"))
    out: dict[str, Decimal] = {}
    for resource in ("cpu", "memory"):
        amount = try_quantity(source.get(resource))
        if amount is not None:
            out[resource] = amount
    return out
