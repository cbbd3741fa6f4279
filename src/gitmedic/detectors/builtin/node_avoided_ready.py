"""A workload still keeps its pods off a node that is Ready again.

The avoid-node lever (``bot/responder/levers/node.py``) keeps a workload's pods
off a NotReady node with a required node affinity (``kubernetes.io/hostname
NotIn [node]``) and the pod template annotation :data:`ANNOTATION` naming the
node. Once that node reports ``Ready=True`` the avoidance only costs capacity
and spreading, so it should go: one finding per workload and node, which the
lift lever answers by restoring both fields from history. Live only (the
node's condition is live state); a node that no longer exists is not Ready
again (replaced nodes get new names), so it is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import is_ready
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

ANNOTATION = "gitmedic.io/avoid-node"
HOSTNAME = "kubernetes.io/hostname"

SPEC = DetectorSpec(
    id="node-avoided-ready",
    description="A workload keeps its pods off a node (gitmedic's avoidance) that is Ready again.",
    kinds=frozenset({"Deployment", "StatefulSet", "Node"}),
    severity=Severity.WARNING,
    remediation="Remove the node affinity and the gitmedic.io/avoid-node annotation.",
    scope=Scope.LIVE,
    certain_because=("never critical (a warning)"),
    playbooks=("node-ready-again",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        node_name = str(_template_annotations(wl).get(ANNOTATION) or "")
        node = snapshot.get("Node", "", node_name) if node_name else None
        if node is not None and is_ready(node) and _avoids(wl, node_name):
            yield SPEC.finding(
                wl.ref,
                f"{wl.ref.kind} {wl.obj.name} keeps its pods off node {node_name}, "
                f"which is Ready again",
                evidence=f"{ANNOTATION}: {node_name}; the node's Ready condition is True",
                related=[node.ref],
                params={"node": node_name},
            )


def _template_annotations(wl: Workload) -> dict[str, object]:
    meta = mapping(mapping(wl.obj.spec.get("template")).get("metadata"))
    return dict(mapping(meta.get("annotations")))


def _avoids(wl: Workload, node: str) -> bool:
    """Does the required node affinity exclude ``node`` by hostname?"""
    affinity = mapping(mapping(wl.pod_spec.get("affinity")).get("nodeAffinity"))
    required = mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in as_list(required.get("nodeSelectorTerms")):
        for expr in as_list(mapping(term).get("matchExpressions")):
            expr = mapping(expr)
            values = as_list(expr.get("values"))
            if (expr.get("key"), expr.get("operator")) == (HOSTNAME, "NotIn") and node in values:
                return True
    return False
