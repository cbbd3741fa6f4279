"""The simulated cluster: desired state in, observed state (real API JSON) out.

``apply(snapshot)`` is what a GitOps sync does (it records rollouts, it does not
compute anything expensive); ``observe()`` recomputes every object at the
clock's current time, a pure function of (what was applied and when, runtime
perturbations, the seed, now), so two clusters fed the same calls agree byte
for byte and the answer for one moment is cached until something changes.

Recomputation order is the control plane's: storage binds claims, HPAs fix
replica counts, workload controllers create pods (admission, scheduling,
kubelet), then Services get their Endpoints and EndpointSlices from the pods,
and every event recorded on the way becomes an Event object.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import CLUSTER_SCOPED, Mode, Obj, Snapshot
from gitmedic.reconciler.clock import Clock
from gitmedic.sim import ids
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.deployments import deployment
from gitmedic.sim.events import event_objects
from gitmedic.sim.fate import PodFate, pod_fate
from gitmedic.sim.flagger import with_canary_services
from gitmedic.sim.flux import is_flux, reconciled
from gitmedic.sim.hpa import Scaling, autoscale
from gitmedic.sim.load import Demand, pod_metrics
from gitmedic.sim.network import (
    PodIndex,
    endpoint_slice,
    endpoints,
    ingress_status,
    service_body,
)
from gitmedic.sim.node_faults import not_ready_node
from gitmedic.sim.nodes import Node, default_nodes, node_object
from gitmedic.sim.pods import PodView
from gitmedic.sim.published import ROOT_CA, published_configmaps, with_published
from gitmedic.sim.published import body as published_body
from gitmedic.sim.rollout import History, Key, advance, key_of
from gitmedic.sim.sets import bare_pod, claim_templates, daemonset, statefulset
from gitmedic.sim.stamps import iso
from gitmedic.sim.storage import claim_problem, claim_status
from gitmedic.sim.world import World

_CONTROLLED = frozenset(
    {
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "Pod",
        "Service",
        "PersistentVolumeClaim",
        "HorizontalPodAutoscaler",
        "ReplicaSet",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "ResourceQuota",
    }
)


@dataclass(frozen=True)
class Observed:
    """The cluster at one moment."""

    at: float
    objects: tuple[dict[str, Any], ...]
    pods: tuple[PodView, ...]
    desired: Snapshot
    revision: str
    _snapshot: list[Snapshot] = field(default_factory=list, compare=False, repr=False)

    @property
    def snapshot(self) -> Snapshot:
        """The observed objects as a live snapshot, for detectors."""
        if not self._snapshot:
            self._snapshot.append(
                Snapshot(
                    map(_to_obj, self.objects),
                    mode=Mode.LIVE,
                    revision=self.revision,
                    taken_at=iso(self.at),
                )
            )
        return self._snapshot[0]


class Cluster:
    def __init__(
        self,
        clock: Clock,
        catalog: ImageCatalog,
        *,
        seed: int = 0,
        nodes: tuple[Node, ...] | None = None,
    ) -> None:
        self.clock = clock
        self.catalog = catalog
        self.seed = seed
        self.nodes = nodes or default_nodes()
        self.created = clock.now()
        self.desired = Snapshot((), mode=Mode.DESIRED)
        self.revision = ""
        self.histories: dict[Key, History] = {}
        self.first_seen: dict[tuple[str, str, str], float] = {}
        self.kills: dict[tuple[str, str, int], tuple[float, ...]] = defaultdict(tuple)
        self.demands: dict[Key, Demand] = {}  # CPU load on workloads (sim.load)
        self.down: dict[str, float] = {}  # node -> NotReady since (sim.node_faults)
        self._version = 0
        self._cache: tuple[tuple[int, float], Observed] | None = None

    # -- inputs -----------------------------------------------------------------------

    def apply(self, snapshot: Snapshot, revision: str | None = None) -> None:
        now = self.clock.now()
        snapshot = with_canary_services(snapshot)  # what Flagger would make of the Canaries
        if revision:  # the registry as of the commit deployed: what was pushed since exists
            self.catalog = self.catalog.at_head(revision)
        histories: dict[Key, History] = {}
        mountable = with_published(snapshot)  # what a pod finds: the repo's, the cluster's
        for wl in snapshot.workloads():
            if wl.obj.kind not in ("Deployment", "StatefulSet", "DaemonSet", "Pod"):
                continue
            key = key_of(wl)
            fate = pod_fate(wl, mountable, self.catalog, self.seed)
            histories[key] = advance(self.histories.get(key), wl, fate, now)
        self.histories = histories
        for obj in snapshot:
            self.first_seen.setdefault((obj.kind, obj.namespace, obj.name), now)
        self.desired = snapshot
        self.revision = snapshot.revision if revision is None else revision
        self._changed()

    def kill_pods(self, kind: str, namespace: str, name: str) -> int:
        """Delete every pod of a workload now (a chaos pod-kill); returns how many."""
        hist = self.histories.get((kind, namespace, name))
        if hist is None:
            raise KeyError(f"no workload {kind}/{namespace}/{name} in the sim")
        count = max(1, hist.current.workload.replicas or len(self.nodes))
        now = self.clock.now()
        for i in range(count):
            self.kills[(namespace, name, i)] = (*self.kills[(namespace, name, i)], now)
        self._changed()
        return count

    def load(self, key: Key, demand: Demand) -> None:
        """Put a CPU demand on a workload from now on (the cpu-saturation fault)."""
        self.demands[key] = demand
        self._changed()

    def node_not_ready(self, name: str) -> None:
        """The node's kubelet reports NotReady from now on (the node-not-ready fault)."""
        if name not in {n.name for n in self.nodes}:
            raise KeyError(f"no node {name} in the sim")
        self.down.setdefault(name, self.clock.now())
        self._changed()

    def node_ready(self, name: str) -> None:
        """The node is Ready again (its kubelet recovered)."""
        self.down.pop(name, None)
        self._changed()

    def _changed(self) -> None:
        self._version += 1

    # -- output -----------------------------------------------------------------------

    def observe(self) -> Observed:
        now = self.clock.now()
        stamp = (self._version, now)
        if self._cache is not None and self._cache[0] == stamp:
            return self._cache[1]
        observed = self._compute(now)
        self._cache = (stamp, observed)
        return observed

    def _compute(self, now: float) -> Observed:
        claims, claim_objs = self._claims()
        world = World(
            now, self.seed, self.nodes, self.desired, claims, dict(self.kills), dict(self.down)
        )
        scalings = self._autoscale()
        objects: list[dict[str, Any]] = [self._node(n) for n in self.nodes]
        objects += claim_objs
        for key in sorted(self.histories, key=_controller_order):
            hist = self.histories[key]
            objects += _control(hist, _replicas(hist, scalings), world)
        objects += [s.body for s in scalings.values()]
        objects += self._services(world.pods)
        objects += self._passthrough()
        objects += self._published_configmaps()
        objects += [p.body for p in world.pods]
        objects += pod_metrics(world.pods, self.demands, now)
        objects += event_objects(world.events)
        return Observed(now, tuple(objects), tuple(world.pods), self.desired, self.revision)

    def _node(self, node: Node) -> dict[str, Any]:
        body = node_object(node, self.created)
        since = self.down.get(node.name)
        return not_ready_node(body, since) if since is not None else body

    def _claims(self) -> tuple[dict[tuple[str, str], str], list[dict[str, Any]]]:
        states: dict[tuple[str, str], str] = {}
        bodies: list[dict[str, Any]] = []
        for pvc in self.desired.of_kind("PersistentVolumeClaim"):
            problem = claim_problem(pvc.body, pvc.namespace, pvc.name, self.desired)
            states[(pvc.namespace, pvc.name)] = problem
            bodies.append(
                self._server_meta(
                    claim_status(pvc.body, pvc.namespace, pvc.name, self.desired, problem), pvc
                )
            )
        for hist in self.histories.values():
            obj = hist.current.workload.obj
            if obj.kind != "StatefulSet":
                continue
            for name, tpl in claim_templates(
                obj.spec, obj.name, hist.current.workload.replicas or 0
            ):
                body = {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": name, "namespace": obj.namespace},
                    "spec": tpl.get("spec", {}),
                }
                problem = claim_problem(body, obj.namespace, name, self.desired)
                states[(obj.namespace, name)] = problem
                bodies.append(
                    claim_status(
                        self._stamp(body, obj.namespace, name),
                        obj.namespace,
                        name,
                        self.desired,
                        problem,
                    )
                )
        return states, bodies

    def _autoscale(self) -> dict[Key, Scaling]:
        fates: dict[Key, PodFate] = {k: h.current.fate for k, h in self.histories.items()}
        out: dict[Key, Scaling] = {}
        for hpa in self.desired.of_kind("HorizontalPodAutoscaler"):
            scaling = autoscale(hpa, self.desired, fates, self._seen(hpa), self.demands)
            scaling.body["metadata"]["uid"] = ids.uid("hpa", hpa.namespace, hpa.name)
            if scaling.target is not None:
                out[key_of(scaling.target)] = scaling
            else:
                out[("HorizontalPodAutoscaler", hpa.namespace, hpa.name)] = scaling
        return out

    def _services(self, pods: list[PodView]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        index = PodIndex(pods)
        for svc in self.desired.of_kind("Service"):
            created = self._seen(svc)
            out.append(service_body(svc, created))
            if not svc.spec.get("selector") or svc.spec.get("type") == "ExternalName":
                continue
            chosen = index.selected(svc)
            out.append(endpoints(svc, chosen, created))
            out.append(endpoint_slice(svc, chosen, created))
        return out

    def _passthrough(self) -> list[dict[str, Any]]:
        out = []
        for obj in self.desired:
            if obj.kind in _CONTROLLED:
                if obj.kind == "ResourceQuota":
                    body = self._server_meta(dict(obj.body), obj)
                    body["status"] = {"hard": dict(obj.spec.get("hard") or {}), "used": {}}
                    out.append(body)
                continue
            body = self._server_meta(dict(obj.body), obj)
            if obj.kind == "Namespace":
                body["status"] = {"phase": "Active"}
            elif obj.kind == "Ingress":
                body["status"] = ingress_status(obj)
            elif is_flux(obj):
                body["status"] = reconciled(obj, iso(self._seen(obj)), self.revision)
            out.append(body)
        return out

    def _published_configmaps(self) -> list[dict[str, Any]]:
        """What the cluster's controllers publish (:mod:`.published`): ``kube-root-ca.crt``
        in every namespace (so a reader can tell "ConfigMaps listed, this one absent" from
        "ConfigMaps not listed"), and the mesh's CA in the mesh's namespaces."""
        out = []
        for ns, name in published_configmaps(self.desired):
            # the sim has no certificate authority: the bundle names the cluster's
            authority = "root" if name == ROOT_CA else name
            data = f"# gitmedic-sim cluster CA {ids.uid('ca', '', authority)}\n"
            out.append(self._stamp(published_body(ns, name, data), ns, name))
        return out

    def _server_meta(self, body: dict[str, Any], obj: Obj) -> dict[str, Any]:
        return self._stamp(body, obj.namespace, obj.name, self._seen(obj))

    def _stamp(
        self, body: dict[str, Any], namespace: str, name: str, created: float | None = None
    ) -> dict[str, Any]:
        meta = dict(body.get("metadata") or {})
        meta.update(
            uid=ids.uid(body.get("kind"), namespace, name),
            creationTimestamp=iso(self.created if created is None else created),
            resourceVersion="1",
        )
        return {**body, "metadata": meta}

    def _seen(self, obj: Obj) -> float:
        return self.first_seen.get((obj.kind, obj.namespace, obj.name), self.created)


def _control(hist: History, replicas: int, world: World) -> list[dict[str, Any]]:
    kind = hist.current.workload.obj.kind
    if kind == "Deployment":
        return deployment(hist, replicas, world)
    if kind == "StatefulSet":
        return statefulset(hist, replicas, world)
    if kind == "DaemonSet":
        return daemonset(hist, world)
    return bare_pod(hist, world)


def _replicas(hist: History, scalings: dict[Key, Scaling]) -> int:
    scaling = scalings.get(key_of(hist.current.workload))
    if scaling is not None and scaling.replicas is not None:
        return scaling.replicas
    return hist.current.workload.replicas or 0


def _controller_order(key: Key) -> tuple[int, str, str]:
    kind, namespace, name = key
    return ({"DaemonSet": 0, "StatefulSet": 1, "Deployment": 2}.get(kind, 3), namespace, name)


def _to_obj(body: dict[str, Any]) -> Obj:
    meta = body.get("metadata") or {}
    kind = str(body.get("kind", ""))
    ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or "")
    return Obj(
        Resource(kind, ns, str(meta.get("name", "")), str(body.get("apiVersion", "v1"))), body
    )


def objects_of_kind(observed: Observed, kinds: Iterable[str]) -> list[dict[str, Any]]:
    wanted = set(kinds)
    return [o for o in observed.objects if o.get("kind") in wanted]
