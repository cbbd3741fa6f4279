"""Choosing what a fault breaks: deterministic defaults, or the object the caller names.

The default target is the first (by name) object where the fault is meaningful
and visible: a Service other workloads call (so traffic shows the break), the
workload behind it, an env var that addresses it. Naming a target picks that
object instead; a name that does not fit is a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.detectors.topology import Call, calls
from gitmedic.sim.faults.edit import FaultNotApplicable


@dataclass(frozen=True)
class Injection:
    """What a fault changed: which object, and the old and new value, for people."""

    fault: str
    target: Resource
    detail: str


def called_services(snap: Snapshot) -> list[Obj]:
    called = {c.service.ref: c.service for c in calls(snap) if c.service is not None}
    fronting = [s for s in called.values() if _backing(snap, s)]
    return sorted(fronting, key=lambda s: s.name)


def service(snap: Snapshot, target: str | None, *, only_called: bool = False) -> Obj:
    """A Service others call (by default the first); any fronting Service if none is called."""
    pool = called_services(snap)
    if not pool and not only_called:
        pool = sorted(
            (s for s in snap.of_kind("Service") if _backing(snap, s)), key=lambda s: s.name
        )
    return _pick(pool, target, "Service")


def workload(
    snap: Snapshot, target: str | None, *, kinds: tuple[str, ...] = ("Deployment",)
) -> Workload:
    pool = [w for w in snap.workloads() if w.obj.kind in kinds]
    if target is None:
        behind = [_backing(snap, s)[0] for s in called_services(snap)]
        pool = [w for w in behind if w.obj.kind in kinds] or pool
    chosen = _pick([w.obj for w in pool], target, "workload")
    return next(w for w in pool if w.obj is chosen)


def behind(snap: Snapshot, svc: Obj) -> Workload:
    backing = _backing(snap, svc)
    if not backing:
        raise FaultNotApplicable(f"{svc.ref} fronts no workload")
    return backing[0]


def address_call(snap: Snapshot, target: str | None, *, with_port: bool = True) -> Call:
    pool = [
        c
        for c in calls(snap)
        if c.service is not None
        and (c.address.port is not None or not with_port)
        and _backing(snap, c.service)
    ]
    if target is not None:
        pool = [c for c in pool if c.caller.obj.name == target or c.env == target]
    if not pool:
        raise FaultNotApplicable(
            f"no env var addresses a Service{f' ({target})' if target else ''}"
        )
    return sorted(pool, key=lambda c: (c.service_name, c.caller.obj.name, c.env))[0]


def _backing(snap: Snapshot, svc: Obj) -> list[Workload]:
    selector = {str(k): str(v) for k, v in mapping(svc.spec.get("selector")).items()}
    found = snap.workloads_selected_by(svc.namespace, selector) if selector else []
    return sorted(found, key=lambda w: w.obj.name)


def _pick(pool: list[Obj], target: str | None, what: str) -> Obj:
    if target is not None:
        for obj in pool:
            if obj.name == target:
                return obj
        raise FaultNotApplicable(f"no suitable {what} named {target!r}")
    if not pool:
        raise FaultNotApplicable(f"no suitable {what} in this app")
    return pool[0]
