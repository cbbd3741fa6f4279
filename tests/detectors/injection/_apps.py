"""Fault injection into the real apps: load an app, change one object, run one detector.

The app is loaded once per process through the real desired-state loader (with
its INDEX namespace); every injection works on deep copies of the bodies it
changes, so tests stay independent.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from gitmedic.detectors import Finding, Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import App, real_apps

Body = dict[str, Any]
REGISTRY = builtin_registry()


def app(name: str) -> App:
    return next(a for a in real_apps() if a.name == name)


@functools.cache
def _objects(name: str) -> tuple[Obj, ...]:
    a = app(name)
    state = load_desired(a.path, namespace=a.namespace)
    return tuple(state.snapshot)


def namespace(name: str) -> str:
    return app(name).namespace


def snapshot(name: str) -> Snapshot:
    return Snapshot(_objects(name))


def mutated(name: str, kind: str, obj_name: str, change: Callable[[Body], None]) -> Snapshot:
    """The app with one object's body changed (on a deep copy)."""
    out, found = [], False
    for obj in _objects(name):
        if obj.kind == kind and obj.name == obj_name:
            body = copy.deepcopy(dict(obj.body))
            change(body)
            obj = Obj(obj.ref, body, obj.source)
            found = True
        out.append(obj)
    assert found, f"{kind}/{obj_name} is not in {name}"
    return Snapshot(out)


def removed(name: str, kind: str, obj_name: str) -> Snapshot:
    objs = [o for o in _objects(name) if not (o.kind == kind and o.name == obj_name)]
    assert len(objs) == len(_objects(name)) - 1, f"{kind}/{obj_name} is not in {name}"
    return Snapshot(objs)


def added(name: str, *bodies: Body) -> Snapshot:
    extra = []
    for body in bodies:
        meta = body["metadata"]
        meta.setdefault("namespace", namespace(name))
        extra.append(Obj(Resource(body["kind"], meta["namespace"], meta["name"]), body))
    return Snapshot([*_objects(name), *extra])


def findings(detector: str, snap: Snapshot, *, at_least: str = "info") -> list[Finding]:
    """Findings of one detector, at ``at_least`` severity or worse."""
    result = run_detectors([REGISTRY.get(detector)], snap)
    assert not result.errors, result.errors
    rank = {"info": 0, "warning": 1, "critical": 2}[at_least]
    return [f for f in result.findings if f.severity.rank >= rank]


def container(body: Body, name: str) -> Body:
    spec = body["spec"]["template"]["spec"]
    found: Body = next(c for c in spec["containers"] if c["name"] == name)
    return found


def env(body: Body, container_name: str, var: str) -> Body:
    found: Body = next(e for e in container(body, container_name)["env"] if e["name"] == var)
    return found
