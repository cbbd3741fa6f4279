"""B-class faults on a workload's pods, with no Git change: a working set that grew, a wedge.

The traffic perturbations of :mod:`.runtime` act on a Service's answers; these
act on the pods themselves, so the GitOps levers (raise a memory limit, restart)
have something to mitigate. Both ride on the engine's revision source: every
desired state the engine applies gets the fault's sim annotations
(:mod:`gitmedic.sim.fate`) on the workload's *metadata*, not its pod template,
so the revision is the same and its pods restart with the new fate, as a
changed fate restarts them; Git never holds the annotations.

- ``memory-growth``: the working set of the workload's first container grows to
  1.5x its memory limit, and stays there (the app needs it): the container is
  OOMKilled until the limit is raised;
- ``wedge``: the pods of the template running at injection stay alive for their
  liveness probe but fail readiness for good (a deadlocked worker); a new
  template (a restart annotation) brings fresh pods that work;
- ``cpu-saturation``: callers ask the workload's first CPU-limited container for
  :data:`SURGE` times the CPU its replicas can give (the replicas Git declares,
  or its HPA's maxReplicas), for good (:mod:`gitmedic.sim.load`): every replica
  runs at its limit until there are enough of them;
- ``image-retag``: the tag of the workload's first container was pushed again
  out of band (Git unchanged): its pods restart on the new build, which
  crashes; the old build is still pullable by its digest;
- ``node-not-ready``: a node (named, or the one the named workload's first pod
  runs on) reports NotReady for good (:mod:`gitmedic.sim.node_faults`): the pods
  bound to it stop serving, new pods go elsewhere.

:func:`inject_named` reads the ``GITMEDIC_SIM_FAULTS`` form (``fault:target``,
``;``-separated) for ``gitmedic run --cluster sim``, whose sim lives in its own
process, with the traffic faults of :mod:`.runtime` under the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.quantity import MI, millicores, whole_bytes
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.sim import ids
from gitmedic.sim.catalog import normalize
from gitmedic.sim.engine import RevisionSource
from gitmedic.sim.fate import ANNOTATION
from gitmedic.sim.faults import runtime
from gitmedic.sim.faults.edit import FaultNotApplicable
from gitmedic.sim.faults.targets import Injection, workload
from gitmedic.sim.load import Demand
from gitmedic.sim.runtime import Sim

GROWTH = 1.5
SURGE = 1.5
WEDGE = "timeout: the worker is deadlocked (its liveness endpoint still answers)"
Adjust = Callable[[Workload], dict[str, str]]  # the sim annotations a workload gets


@dataclass
class RuntimeSource:
    """The engine's revision source, with runtime annotations added to what it applies."""

    inner: RevisionSource
    adjust: dict[tuple[str, str, str], Adjust] = field(default_factory=dict)

    def head(self) -> str:
        return self.inner.head()

    def desired(self, revision: str) -> Snapshot:
        return self.adjusted(self.inner.desired(revision))

    def adjusted(self, snap: Snapshot) -> Snapshot:
        objects = [self._obj(snap, o) for o in snap]
        return Snapshot(
            objects,
            mode=snap.mode,
            revision=snap.revision,
            taken_at=snap.taken_at,
            schema=snap.schema,
        )

    def _obj(self, snap: Snapshot, obj: Obj) -> Obj:
        fault = self.adjust.get((obj.kind, obj.namespace, obj.name))
        wl = snap.workload(obj.ref) if fault is not None else None
        notes = fault(wl) if fault is not None and wl is not None else {}
        if not notes:
            return obj
        meta = dict(mapping(obj.body.get("metadata")))
        meta["annotations"] = {**mapping(meta.get("annotations")), **notes}
        return Obj(obj.ref, {**obj.body, "metadata": meta}, obj.source)


def source_of(sim: Sim) -> RuntimeSource:
    """The sim engine's source, wrapped once."""
    if not isinstance(sim.engine.source, RuntimeSource):
        sim.engine.source = RuntimeSource(sim.engine.source)
    return sim.engine.source


def _add(sim: Sim, wl: Workload, adjust: Adjust) -> None:
    """Register ``adjust`` and re-apply what runs now, so the fault shows at once."""
    source = source_of(sim)
    source.adjust[(wl.obj.kind, wl.obj.namespace, wl.obj.name)] = adjust
    sim.cluster.apply(source.adjusted(sim.cluster.desired), sim.cluster.revision)


def memory_growth(sim: Sim, target: str | None = None) -> Injection:
    """The first container's working set grows to 1.5x its memory limit, for good."""
    wl = workload(sim.cluster.desired, target)
    limited = [(c.name, _limit(c.body)) for c in wl.containers(init=False)]
    name, limit = next(((n, lim) for n, lim in limited if lim), ("", None))
    if limit is None:
        raise FaultNotApplicable(f"{wl.ref}: no container has a memory limit to outgrow")
    grown = int(limit * GROWTH) // MI
    _add(sim, wl, lambda _: {f"{ANNOTATION}working-set-{name}": f"{grown}Mi"})
    return Injection("memory-growth", wl.ref, f"{name}'s working set grew to {grown}Mi")


def wedge(sim: Sim, target: str | None = None) -> Injection:
    """The pods of the template running now fail readiness for good (liveness passes)."""
    wl = workload(sim.cluster.desired, target)
    stuck = ids.template_hash(wl.obj.spec.get("template"))

    def adjust(current: Workload) -> dict[str, str]:
        if ids.template_hash(current.obj.spec.get("template")) != stuck:
            return {}  # a new template: fresh pods are not wedged
        return {f"{ANNOTATION}unready-{c.name}": WEDGE for c in current.containers(init=False)}

    _add(sim, wl, adjust)
    return Injection("wedge", wl.ref, "pods deadlocked: running, never Ready")


def cpu_saturation(sim: Sim, target: str | None = None) -> Injection:
    """A load of 1.5x what the workload's replicas can serve at their CPU limit."""
    desired = sim.cluster.desired
    wl = workload(desired, target)
    limited = [(c.name, _cpu_limit(c.body)) for c in wl.containers(init=False)]
    name, limit = next(((n, lim) for n, lim in limited if lim), ("", None))
    if limit is None:
        raise FaultNotApplicable(f"{wl.ref}: no container has a CPU limit to saturate")
    replicas = _max_replicas(desired, wl) or wl.replicas or 1
    total = int(limit * replicas * SURGE)
    sim.cluster.load((wl.obj.kind, wl.obj.namespace, wl.obj.name), Demand(name, total))
    return Injection("cpu-saturation", wl.ref, f"callers ask {name} for {total}m of CPU")


def image_retag(sim: Sim, target: str | None = None) -> Injection:
    """The first container's tag names a new, crashing build from now on."""
    wl = workload(sim.cluster.desired, target)
    image = next((str(c.body.get("image") or "") for c in wl.containers(init=False)), "")
    if not image or "@" in image:
        raise FaultNotApplicable(f"{wl.ref}: no container image by tag to push again")
    catalog = replace(sim.catalog, rebuilt=sim.catalog.rebuilt | {normalize(image)})
    sim.catalog = sim.cluster.catalog = catalog
    sim.cluster.apply(sim.cluster.desired, sim.cluster.revision)  # its pods restart on it
    return Injection("image-retag", wl.ref, f"{image} pushed again: the new build crashes")


def node_not_ready(sim: Sim, target: str | None = None) -> Injection:
    """A node goes NotReady: ``target`` names it, or a workload whose first pod is on it."""
    nodes = {n.name for n in sim.cluster.nodes}
    name = target if target in nodes else _node_of(sim, target)
    sim.cluster.node_not_ready(name)
    return Injection("node-not-ready", Resource("Node", "", name, "v1"), f"node {name} NotReady")


def _node_of(sim: Sim, target: str | None) -> str:
    wl = workload(sim.cluster.desired, target)
    live = sim.cluster.observe().snapshot
    selector = mapping(mapping(wl.obj.spec.get("selector")).get("matchLabels"))
    pods = live.pods_selected_by(wl.obj.namespace, selector or wl.template_labels)
    placed = sorted(str(p.spec.get("nodeName")) for p in pods if p.spec.get("nodeName"))
    if not placed:
        raise FaultNotApplicable(f"{wl.ref}: no pod is placed on a node")
    return placed[0]


def _max_replicas(desired: Snapshot, wl: Workload) -> int | None:
    for hpa in desired.of_kind("HorizontalPodAutoscaler", wl.obj.namespace):
        ref = mapping(hpa.spec.get("scaleTargetRef"))
        high = hpa.spec.get("maxReplicas")
        if (ref.get("kind"), ref.get("name")) == (wl.obj.kind, wl.obj.name) and isinstance(
            high, int
        ):
            return high
    return None


def _cpu_limit(container: Mapping[str, Any]) -> int | None:
    return millicores(mapping(mapping(container.get("resources")).get("limits")).get("cpu"))


def _limit(container: Mapping[str, Any]) -> int | None:
    return whole_bytes(mapping(mapping(container.get("resources")).get("limits")).get("memory"))


RUNTIME: dict[str, Callable[[Sim, str | None], Injection]] = {
    "memory-growth": memory_growth,
    "wedge": wedge,
    "cpu-saturation": cpu_saturation,
    "image-retag": image_retag,
    "node-not-ready": node_not_ready,
    "database-auth-revoked": runtime.database_auth_revoked,
    "cache-password-changed": runtime.cache_password_changed,
    "lock-contention": runtime.lock_contention,
    "poison-records": runtime.poison_records,
    "network-delay": runtime.network_delay,
    "network-loss": runtime.network_loss,
    "traffic-flood": runtime.traffic_flood,
    "pod-kill": runtime.pod_kill,
}


def inject_named(sim: Sim, spec: str) -> list[Injection]:
    """Inject ``fault:target;fault:target`` (target optional); an unknown fault injects none."""
    wanted: list[tuple[str, str | None]] = []
    for item in (part.strip() for part in spec.split(";")):
        if not item:
            continue
        fault, _, target = item.partition(":")
        if fault not in RUNTIME:
            raise FaultNotApplicable(f"unknown runtime fault {fault!r}; known: {sorted(RUNTIME)}")
        wanted.append((fault, target or None))
    return [RUNTIME[fault](sim, target) for fault, target in wanted]


__all__ = [
    "RUNTIME",
    "RuntimeSource",
    "cpu_saturation",
    "image_retag",
    "inject_named",
    "memory_growth",
    "node_not_ready",
    "wedge",
]
