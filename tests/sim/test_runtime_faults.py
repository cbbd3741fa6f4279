"""B-class faults: runtime perturbations with no Git change; callers see them."""

from __future__ import annotations

import pytest

from gitmedic.sim.faults import runtime
from tests.sim.helpers import desired, sim_for

ERRORS = [
    runtime.database_auth_revoked,
    runtime.cache_password_changed,
    runtime.network_loss,
    runtime.poison_records,
    runtime.traffic_flood,
]
SLOW = [runtime.lock_contention, runtime.network_delay]


@pytest.mark.parametrize("fault", ERRORS, ids=lambda f: f.__name__)
def test_error_faults_make_callers_fail_without_touching_manifests(fault: object) -> None:
    snapshot = desired("online-boutique")
    sim = sim_for(snapshot)
    sim.run(120, step_s=30)

    injection = fault(sim)  # type: ignore[operator]
    state = sim.run(120, step_s=30)

    assert sim.cluster.desired is snapshot
    assert state.traffic.entrypoints["boutique/frontend-external"].success_rate < 1.0
    assert injection.target.kind == "Service"
    assert "HighErrorRate" in {a["labels"]["alertname"] for a in state.alerts}


@pytest.mark.parametrize("fault", SLOW, ids=lambda f: f.__name__)
def test_slow_faults_raise_latency(fault: object) -> None:
    sim = sim_for(desired("online-boutique"))
    before = sim.run(120, step_s=30).traffic.entrypoints["boutique/frontend-external"]

    fault(sim)  # type: ignore[operator]
    after = sim.run(10).traffic.entrypoints["boutique/frontend-external"]

    assert after.latency_ms > before.latency_ms + 400
    assert after.success_rate == 1.0


def test_pod_kill_replaces_the_pods_which_recover() -> None:
    sim = sim_for(desired("online-boutique"))
    before = {p.body["metadata"]["name"] for p in sim.run(120, step_s=30).observed.pods}

    runtime.pod_kill(sim)
    during = sim.run(0)
    after = sim.run(60, step_s=10)

    names = {p.body["metadata"]["name"] for p in after.observed.pods}
    assert len(names - before) == 1
    assert not all(p.ready for p in during.observed.pods)
    assert all(p.ready for p in after.observed.pods)
