"""Pods pinned to nodes that do not exist: they stay Pending (FailedScheduling).

Judged only when the snapshot knows the nodes (see :mod:`._nodes`): always in
live mode, in desired state when the repo describes its nodes. Rules, checked
in this order so the finding names the field that excludes every node:

- ``node-name``: ``nodeName`` names no Node.
- ``node-selector``: no Node carries all of the ``nodeSelector`` labels (the
  catalogue's nonexistent-node: ``kubernetes.io/hostname: extra-node``). The
  params name the pairs no node carries, with the values nodes do carry for
  those keys, so a fix can restore one.
- ``node-affinity``: the nodes that pass the nodeSelector all fail every
  required ``nodeSelectorTerm``.

Taints are not considered here: a tainted node still exists, and whether the
pod tolerates it is another fault.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._fields import key_path, pod_spec_path
from gitmedic.detectors.builtin._nodes import Node, cluster_nodes, nodes_matching_selection
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="node-selector-unmatched",
    description="A pod's nodeName, nodeSelector or required node affinity matches no Node.",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod", "Node"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the nodeSelector (or node affinity, or nodeName) to its last good value, "
        "or remove the constraint, so that at least one existing node matches."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "judged only against the Node objects the snapshot holds: no node carries what the pod "
        "requires"
    ),
    playbooks=("nonexistent-node",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    nodes = cluster_nodes(snapshot)
    if nodes is None:
        return
    for wl in snapshot.workloads():
        if nodes_matching_selection(snapshot, wl.pod_spec):
            continue
        finding = _explain(snapshot, wl, nodes)
        if finding is not None:
            yield finding


def _explain(snapshot: Snapshot, wl: Workload, nodes: tuple[Node, ...]) -> Finding | None:
    base = pod_spec_path(wl.obj.kind)
    spec = wl.pod_spec
    node_name = spec.get("nodeName")
    if node_name and all(n.name != node_name for n in nodes):
        return _finding(wl, "node-name", f"{base}.nodeName", node_name, [n.name for n in nodes])
    selector = {str(k): str(v) for k, v in mapping(spec.get("nodeSelector")).items()}
    if not nodes_matching_selection(snapshot, {"nodeSelector": selector}):
        return _selector_finding(wl, base, selector, nodes)
    if mapping(spec.get("affinity")).get("nodeAffinity"):
        path = f"{base}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        required = mapping(mapping(spec["affinity"])["nodeAffinity"]).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        return _finding(wl, "node-affinity", path, required, sorted({n.name for n in nodes}))
    return None


def _selector_finding(
    wl: Workload, base: str, selector: dict[str, str], nodes: tuple[Node, ...]
) -> Finding:
    absent = {k: v for k, v in selector.items() if all(n.labels.get(k) != v for n in nodes)}
    # Pairs that each exist but never together: blame the whole selector.
    blamed = absent or selector
    key = sorted(blamed)[0]
    known = {k: sorted({n.labels[k] for n in nodes if k in n.labels}) for k in sorted(blamed)}
    return _finding(
        wl,
        "node-selector",
        key_path(f"{base}.nodeSelector", key),
        blamed[key],
        known,
        extra={"selector": selector, "unmatched": blamed},
    )


def _finding(
    wl: Workload,
    rule: str,
    path: str,
    value: object,
    known: object,
    extra: dict[str, object] | None = None,
) -> Finding:
    what = {"node-name": "nodeName", "node-selector": "nodeSelector"}.get(rule, "node affinity")
    return SPEC.finding(
        wl.ref,
        f"{wl.obj.kind} {wl.ref.name}: {what} matches no node, its pods cannot be scheduled",
        rule=rule,
        evidence=f"{path}={value!r}; nodes offer {known}",
        params={"path": path, "value": value, "node_values": known, **(extra or {})},
    )
