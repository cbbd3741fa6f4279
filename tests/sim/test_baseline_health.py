"""Which real apps are healthy at baseline in the sim, and why the others are not."""

from __future__ import annotations

import pytest

from gitmedic.sim.health import Status, health_of
from tests.sim.helpers import HEALTHY, UNHEALTHY, desired, sim_for

pytestmark = pytest.mark.integration  # each settles a whole app in the sim


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_app_settles_ready_synced_and_silent(name: str) -> None:
    state = sim_for(desired(name)).run(600)

    assert all(p.ready for p in state.observed.pods), [
        p.body["metadata"]["name"] for p in state.observed.pods if not p.ready
    ]
    assert state.application["status"]["health"]["status"] == "Healthy"
    assert state.application["status"]["sync"]["status"] == "Synced"
    assert state.traffic.entrypoints
    assert {r.success_rate for r in state.traffic.entrypoints.values()} == {1.0}
    assert state.alerts == []


@pytest.mark.parametrize("name", sorted(UNHEALTHY))
def test_unhealthy_app_shows_its_real_defect(name: str) -> None:
    state = sim_for(desired(name)).run(600)

    stuck = [p for p in state.observed.pods if not p.ready]
    assert stuck
    reasons = {
        e["reason"]
        for e in state.observed.objects
        if e["kind"] == "Event" and e["type"] == "Warning"
    }
    assert UNHEALTHY[name] in reasons
    assert state.application["status"]["health"]["status"] != "Healthy"


def test_pods_become_ready_seconds_after_start_not_at_once() -> None:
    sim = sim_for(desired("online-boutique"))

    early = sim.run(10)  # the engine applies the revision at t=10 s
    late = sim.run(60)

    assert early.observed.pods
    assert not any(p.ready for p in early.observed.pods)
    assert all(p.ready for p in late.observed.pods)
    assert health_of(_deployment(early, "frontend"))[0] is Status.PROGRESSING


def test_same_seed_same_world_other_seed_other_names() -> None:
    a = sim_for(desired("sock-shop"), seed=1).run(120).to_json()
    b = sim_for(desired("sock-shop"), seed=1).run(120).to_json()
    c = sim_for(desired("sock-shop"), seed=2).run(120).to_json()

    assert a == b
    assert _pod_names(a) != _pod_names(c)


def _deployment(state: object, name: str) -> dict[str, object]:
    objects = state.observed.objects  # type: ignore[attr-defined]
    return next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == name)


def _pod_names(doc: dict[str, object]) -> set[str]:
    objects = doc["objects"]
    assert isinstance(objects, list)
    return {o["metadata"]["name"] for o in objects if o["kind"] == "Pod"}
