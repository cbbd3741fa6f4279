"""One recomputation of the cluster at one moment: the scratch state controllers share.

Controllers run in a fixed order over the workloads; each asks the world to
create pods (admission, then scheduling, then rendering at ``now``), and the
world collects the pods, the events and the node-level events they produce.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.sim.admission import Admission
from gitmedic.sim.defaults import defaulted_spec
from gitmedic.sim.fate import PodFate
from gitmedic.sim.lifecycle import EventSpec
from gitmedic.sim.node_faults import stranded
from gitmedic.sim.nodes import Node
from gitmedic.sim.pods import PodIdentity, PodView, render_pod
from gitmedic.sim.scheduling import PodRequest, Scheduler


@dataclass(frozen=True)
class Involved:
    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


@dataclass
class World:
    now: float
    seed: int
    nodes: tuple[Node, ...]
    desired: Snapshot
    claims: Mapping[tuple[str, str], str]  # (namespace, claim) -> "" bound, else problem
    kills: Mapping[tuple[str, str, int], tuple[float, ...]]  # (ns, owner, index) -> kill times
    down: Mapping[str, float] = field(default_factory=dict)  # node -> NotReady since
    scheduler: Scheduler = field(init=False)
    admission: Admission = field(init=False)
    pods: list[PodView] = field(default_factory=list)
    events: list[tuple[Involved, EventSpec]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scheduler = Scheduler(self.nodes, self.down)
        self.admission = Admission(self.desired)

    def kill_state(self, namespace: str, owner: str, index: int, since: float) -> tuple[int, float]:
        """(how many times replica ``index`` was killed since ``since``, its latest start)."""
        times = [t for t in self.kills.get((namespace, owner, index), ()) if since <= t <= self.now]
        return len(times), max([since, *times])

    def create(self, who: PodIdentity, fate: PodFate, owner_key: str) -> PodView | str:
        """A rendered pod, or the API server's refusal message."""
        who = replace(who, spec=defaulted_spec(who.spec, self.desired, who.namespace))
        refusal = self.admission.admit(who.namespace, who.name, who.spec)
        if refusal:
            return refusal
        claims = self._claims(who)
        request = PodRequest(who.name, owner_key, who.labels, who.spec, claims, who.created)
        placement = self.scheduler.place(request)
        prefix = next((n.pod_cidr_prefix for n in self.nodes if n.name == placement.node), "")
        view = render_pod(who, fate, placement.node, prefix, placement.message, self.now, self.seed)
        since = self.down.get(placement.node or "")
        return stranded(view, since) if since is not None else view

    def release(self, view: PodView) -> None:
        self.scheduler.release(str(view.body["metadata"]["name"]))

    def keep(self, view: PodView) -> None:
        self.pods.append(view)
        meta = view.body["metadata"]
        who = Involved("v1", "Pod", meta["namespace"], meta["name"], meta["uid"])
        self.events.extend((who, e) for e in view.events)
        for node in self.nodes:
            if node.name == view.node:
                target = Involved("v1", "Node", "", node.name, node.name)
                self.events.extend((target, e) for e in view.node_events)

    def event(self, involved: Involved, spec: EventSpec) -> None:
        self.events.append((involved, spec))

    def _claims(self, who: PodIdentity) -> dict[str, str]:
        out: dict[str, str] = {}
        for vol in as_list(who.spec.get("volumes")):
            claim = mapping(mapping(vol).get("persistentVolumeClaim")).get("claimName")
            if isinstance(claim, str):
                out[claim] = self._claim_problem(who.namespace, claim)
        return out

    def _claim_problem(self, namespace: str, claim: str) -> str:
        state = self.claims.get((namespace, claim))
        if state is None:
            return f'persistentvolumeclaim "{claim}" not found'
        return "pod has unbound immediate PersistentVolumeClaims" if state else ""


def owner_ref(api_version: str, kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
