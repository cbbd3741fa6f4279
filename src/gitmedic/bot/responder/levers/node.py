"""Keep pods off a NotReady node, and let them back when it is Ready again.

Avoid: a ``deployment-unavailable`` finding whose un-Ready pods all sit on one
node whose ``Ready`` condition is not True, while another node is Ready. A
node fault is not a commit's: what a pod runs cannot make its node NotReady.
Only a recent change to where the pods go (nodeSelector, affinity,
tolerations, nodeName) may have put them there, so the lever declines on
that (the bisect judges it), and on a workload that already has its own
required node affinity (merging terms is a person's call). The edit adds a
required node affinity ``kubernetes.io/hostname NotIn [node]`` to the pod
template and the annotation :data:`ANNOTATION` naming the node, so the
workload rolls out fresh pods elsewhere, and people and the follow-up see why.

Lift: a ``node-avoided-ready`` finding (the annotated node is Ready again).
Both fields go back to what they were before the commit that added them (a
restore from history, one transaction like any fix), so the pods may use
the node again.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.bot.responder.levers.evidence import Evidence, set_fields
from gitmedic.bot.responder.live_blame import last_change_of
from gitmedic.bot.responder.workspace import Fix
from gitmedic.detectors.builtin._pods import is_ready
from gitmedic.detectors.builtin.node_avoided_ready import ANNOTATION, HOSTNAME
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.reconciler.manifests.documents import EditError
from gitmedic.reconciler.manifests.paths import Path, lookup

AVOID_PLAYBOOK = "node-not-ready"
LIFT_PLAYBOOK = "node-ready-again"
MOVABLE = frozenset({"Deployment", "StatefulSet"})
POD: Path = ("spec", "template", "spec")
NOTE: Path = ("spec", "template", "metadata", "annotations", ANNOTATION)
REQUIRED: Path = (
    *POD,
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
)
PLACEMENT = ("nodeSelector", "affinity", "tolerations", "nodeName")


@dataclass(frozen=True)
class AvoidNode:
    id: str = "avoid-node"
    playbook: str = AVOID_PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        wl = ev.workload() if f.resource.kind in MOVABLE else None
        if f.detector != "deployment-unavailable" or wl is None or ev.live is None:
            return None
        node = _the_not_ready_node(ev.live, [p for p in ev.live_pods(wl) if not is_ready(p)])
        if node is None or not _anotheris_ready(ev.live, node) or _own_node_affinity(wl):
            return None
        if any(ev.recent_change(wl.ref, (*POD, key)) for key in PLACEMENT):
            return None
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "NotIn", "values": [node]}]}
        text = (
            f"{f.summary} ({f.detector}): every un-Ready pod of {wl.ref} sits on node {node}, "
            f"whose Ready condition is not True ({_why(ev.live, node)}), while other nodes are "
            f"Ready; no recent commit changed where its pods go. Lever {self.id}: a required "
            f"node affinity {HOSTNAME} NotIn [{node}] on the pod template (and the annotation "
            f"{ANNOTATION}: {node}), so fresh pods run elsewhere; a follow-up pull request "
            f"removes it once {node} is Ready again. Risk medium: the pods lose one node of "
            f"the cluster; undone if they do not become Ready elsewhere."
        )
        values = [(NOTE, node), (REQUIRED, {"nodeSelectorTerms": [term]})]
        return set_fields(ev, wl.ref, values, text, self.playbook)


@dataclass(frozen=True)
class LiftNodeAvoidance:
    id: str = "lift-node-avoidance"
    playbook: str = LIFT_PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        wl = ev.workload() if f.resource.kind in MOVABLE else None
        if f.detector != "node-avoided-ready" or wl is None:
            return None
        added = last_change_of(ev.ws, wl.ref, NOTE, float("-inf"))
        if added is None or not added.parents:
            return None
        before = added.parents[0]
        paths = [_outermost_added(ev, wl, before, p) for p in (NOTE, REQUIRED)]
        try:
            edits = ev.ws.restore(wl.ref, paths, before, {})
        except EditError:
            return None
        if not edits:
            return None
        node = str(f.params.get("node", ""))
        text = (
            f"{f.summary} ({f.detector}). Lever {self.id}: the node affinity and annotation "
            f'that {added.sha[:12]} "{added.subject}" added to keep pods off {node} go back '
            f"to what they were before it, so the pods may use {node} again. Risk medium: "
            f"pods may be placed on {node}; undone if they do not stay Ready."
        )
        contents = ev.ws.applied(edits, {})
        return Fix("lever", tuple(edits), contents, text, self.playbook, added)


def not_ready_evidence(ev: Evidence) -> str | None:
    """Where the finding's workload has un-Ready pods on a NotReady node, say so (an
    escalation names the node even when no lever moves the pods)."""
    wl = ev.workload() if ev.finding.resource.kind in MOVABLE else None
    if wl is None or ev.live is None:
        return None
    stuck = [p for p in ev.live_pods(wl) if not is_ready(p)]
    nodes = sorted({str(p.spec.get("nodeName") or "") for p in stuck} - {""})
    down = [n for n in nodes if (node := ev.live.get("Node", "", n)) and not is_ready(node)]
    if not down:
        return None
    shown = "; ".join(f"{n} ({_why(ev.live, n)})" for n in down)
    return f"un-Ready pods of {wl.ref} sit on NotReady node(s) {shown}"


AVOID_NODE = AvoidNode()
LIFT_NODE_AVOIDANCE = LiftNodeAvoidance()


def _outermost_added(ev: Evidence, wl: Workload, before: str, path: Path) -> Path:
    """The outermost part of ``path`` absent at ``before`` (what the avoid lever inserted:
    ``affinity`` when there was none), so the restore leaves no empty mapping behind."""
    old = ev.ws.states.at(before).get(wl.ref.kind, wl.ref.namespace, wl.ref.name)
    body = old.body if old is not None else {}
    depth = len(path)
    while depth > 1 and not lookup(body, path[: depth - 1])[0]:
        depth -= 1
    return path[:depth]


def _the_not_ready_node(live: Snapshot, pods: list[Obj]) -> str | None:
    """The one node all ``pods`` are bound to, if it is not Ready; else None."""
    nodes = {str(p.spec.get("nodeName") or "") for p in pods}
    if len(nodes) != 1 or "" in nodes:
        return None
    (name,) = nodes
    node = live.get("Node", "", name)
    return name if node is not None and not is_ready(node) else None


def _anotheris_ready(live: Snapshot, avoided: str) -> bool:
    return any(n.name != avoided and is_ready(n) for n in live.of_kind("Node"))


def _own_node_affinity(wl: Workload) -> bool:
    affinity = mapping(mapping(wl.pod_spec.get("affinity")).get("nodeAffinity"))
    return bool(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))


def _why(live: Snapshot, name: str) -> str:
    node = live.get("Node", "", name)
    for c in as_list(node.status.get("conditions") if node else ()):
        if mapping(c).get("type") == "Ready":
            c = mapping(c)
            return f"{c.get('status')}: {c.get('reason')}, {c.get('message')}"
    return "no Ready condition"
