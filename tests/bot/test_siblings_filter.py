"""What a sibling app's objects take with them out of a shared namespace's live snapshot."""

from __future__ import annotations

from typing import Any

from gitmedic.bot.controller.siblings import without_siblings
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot


def _obj(kind: str, name: str, owner: tuple[str, str] | None = None, **body: Any) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "team"}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1]}]
    return Obj(Resource(kind, "team", name), {"kind": kind, "metadata": meta, **body})


def test_a_sibling_service_takes_its_endpoints_slices_and_events_with_it() -> None:
    objects = [
        _obj("Service", "staging-web"),
        _obj("Endpoints", "staging-web"),
        _obj("EndpointSlice", "staging-web-abc", ("Service", "staging-web")),
        _obj("Event", "e1", involvedObject={"kind": "Service", "name": "staging-web"}),
        _obj("Service", "dev-web"),
        _obj("Endpoints", "dev-web"),
        _obj("Event", "e2", involvedObject={"kind": "Service", "name": "dev-web"}),
        _obj("Node", "node-1"),
        _obj("PersistentVolumeClaim", "scratch"),
    ]
    snapshot = Snapshot(objects, mode=Mode.LIVE, taken_at="2026-12-01T00:00:00Z")
    kept = without_siblings(snapshot, frozenset({("Service", "staging-web")}))
    assert [(o.kind, o.name) for o in kept] == [
        ("Service", "dev-web"),
        ("Endpoints", "dev-web"),
        ("Event", "e2"),
        ("Node", "node-1"),
        ("PersistentVolumeClaim", "scratch"),
    ]
    assert kept.live and kept.taken_at == snapshot.taken_at


def test_ownership_is_followed_whatever_the_listing_order() -> None:
    """A pod listed before its ReplicaSet, which is listed before its Deployment."""
    objects = [
        _obj("Pod", "staging-web-7d4-x", ("ReplicaSet", "staging-web-7d4")),
        _obj("ReplicaSet", "staging-web-7d4", ("Deployment", "staging-web")),
        _obj("Deployment", "staging-web"),
        _obj("Pod", "dev-web-5c9-y", ("ReplicaSet", "dev-web-5c9")),
    ]
    kept = without_siblings(Snapshot(objects), frozenset({("Deployment", "staging-web")}))
    assert [o.name for o in kept] == ["dev-web-5c9-y"]


def test_a_namespace_of_its_own_is_read_as_it_is() -> None:
    snapshot = Snapshot([_obj("Pod", "p")])
    assert without_siblings(snapshot, frozenset()) is snapshot
