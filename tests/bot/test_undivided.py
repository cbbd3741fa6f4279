"""A neighbour of the namespace that does not render: which objects are its is unknown, so the
loop judges only what its own app renders (and what that owns); the rest opens no incident."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gitmedic.bot.controller.monitor import Monitor
from gitmedic.bot.controller.siblings import about_own
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.detectors.spec import Detector, DetectorSpec

SPEC = DetectorSpec(
    id="every-pod",
    description="a finding on every pod, Endpoints and Node",
    kinds=frozenset({"Pod", "Endpoints", "Node"}),
    severity=Severity.CRITICAL,
    remediation="none",
    fire_after=1,
    clear_after=1,
)
OWN = frozenset({("Deployment", "dev-web"), ("Service", "dev-web")})


def _obj(kind: str, name: str, owner: tuple[str, str] | None = None) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "team"}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1]}]
    return Obj(Resource(kind, "team", name), {"kind": kind, "metadata": meta})


def _namespace() -> Snapshot:
    """Two apps' Deployments with their ReplicaSets and pods (listed pods first), the dev
    Service's Endpoints, and a Node no app renders."""
    objects = [
        _obj("Pod", "staging-web-7d4-x", ("ReplicaSet", "staging-web-7d4")),
        _obj("Pod", "dev-web-5c9-y", ("ReplicaSet", "dev-web-5c9")),
        _obj("ReplicaSet", "staging-web-7d4", ("Deployment", "staging-web")),
        _obj("ReplicaSet", "dev-web-5c9", ("Deployment", "dev-web")),
        _obj("Deployment", "staging-web"),
        _obj("Deployment", "dev-web"),
        _obj("Endpoints", "dev-web"),
        _obj("Endpoints", "staging-web"),
        _obj("Node", "node-1"),
    ]
    return Snapshot(objects, mode=Mode.LIVE, taken_at="2026-12-01T00:00:00Z")


def _everything(snapshot: Snapshot) -> Iterator[Finding]:
    for obj in snapshot:
        if obj.kind in SPEC.kinds:
            yield SPEC.finding(obj.ref, f"{obj.name} is unwell")


def test_findings_about_what_the_app_renders_and_owns_are_its_own() -> None:
    snapshot = _namespace()
    mine, unsure = about_own(_everything(snapshot), snapshot, OWN)
    assert [f.resource.name for f in mine] == ["dev-web-5c9-y", "dev-web"]
    assert [f.resource.name for f in unsure] == ["staging-web-7d4-x", "staging-web", "node-1"]


def test_the_monitor_opens_nothing_for_what_might_be_a_neighbour_s() -> None:
    snapshot = _namespace()
    monitor = Monitor([Detector(SPEC, _everything)], own=OWN)
    alert = {"labels": {"severity": "critical", "service": "staging-web", "namespace": "team"}}
    found, transition = monitor.evaluate(snapshot, [alert])
    assert {f.resource.name for f in found} == {"dev-web-5c9-y", "dev-web"}
    assert {f.resource.name for f in transition.activated} == {"dev-web-5c9-y", "dev-web"}
    unsure = {f.resource.name for f in monitor.unsure}
    assert unsure == {"staging-web-7d4-x", "staging-web", "node-1"}


def test_a_neighbour_s_alert_is_set_aside_when_the_app_s_own_objects_are_fine() -> None:
    """Runtime evidence too: an alert on a Service the app does not render opens nothing."""
    snapshot = Snapshot([_obj("Deployment", "dev-web")], mode=Mode.LIVE)
    monitor = Monitor([Detector(SPEC, _everything)], own=OWN)
    alerts = [
        {"labels": {"severity": "critical", "service": name, "namespace": "team"}}
        for name in ("staging-web", "dev-web")
    ]
    found, _ = monitor.evaluate(snapshot, alerts)
    assert [f.resource.name for f in found] == ["dev-web"]
    assert [f.resource.name for f in monitor.unsure] == ["staging-web"]


def test_without_own_every_finding_is_judged_as_before() -> None:
    snapshot = _namespace()
    found, _ = Monitor([Detector(SPEC, _everything)]).evaluate(snapshot)
    assert len(found) == 5  # two pods, two Endpoints, the Node
