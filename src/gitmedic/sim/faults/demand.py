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
  template (a restart annotation) brings fresh pods that work.

:func:`inject_named` reads the ``GITMEDIC_SIM_FAULTS`` form (``fault:target``,
``;``-separated) for ``gitmedic run --cluster sim``, whose sim lives in its own
process, with the traffic faults of :mod:`.runtime` under the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitmedic.detectors.quantity import MI, whole_bytes
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.sim import ids
from gitmedic.sim.engine import RevisionSource
from gitmedic.sim.fate import ANNOTATION
from gitmedic.sim.faults import runtime
from gitmedic.sim.faults.edit import FaultNotApplicable
from gitmedic.sim.faults.targets import Injection, workload
from gitmedic.sim.runtime import Sim

GROWTH = 1.5
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


def _limit(container: Mapping[str, Any]) -> int | None:
    return whole_bytes(mapping(mapping(container.get("resources")).get("limits")).get("memory"))


RUNTIME: dict[str, Callable[[Sim, str | None], Injection]] = {
    "memory-growth": memory_growth,
    "wedge": wedge,
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


__all__ = ["RUNTIME", "RuntimeSource", "inject_named", "memory_growth", "wedge"]
