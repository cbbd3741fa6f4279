"""The Argo CD Application stand-in: sync status, operation phases, health, failures."""

from __future__ import annotations

from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.clock import FakeClock
from gitmedic.sim.engine import EngineConfig, MemorySource, SyncFailure
from gitmedic.sim.runtime import Sim
from tests.sim.helpers import desired

APP = "online-boutique"


def _sim(config: EngineConfig) -> tuple[Sim, MemorySource]:
    base = desired(APP)
    source = MemorySource({"a" * 40: base}, "a" * 40)
    sim = Sim(source, ImageCatalog.from_snapshots([base]), FakeClock(), engine_config=config)
    return sim, source


def _status(sim: Sim) -> dict[str, object]:
    status = sim.engine.application()["status"]
    assert isinstance(status, dict)
    return status


def test_syncs_head_after_the_delay_and_reports_each_phase() -> None:
    sim, _ = _sim(EngineConfig(sync_delay_s=10, sync_duration_s=4))

    sim.run(5, step_s=5)
    out_of_sync = _status(sim)
    sim.run(5, step_s=5)
    running = _status(sim)
    sim.run(5, step_s=5)
    done = _status(sim)

    assert out_of_sync["sync"]["status"] == "OutOfSync"  # type: ignore[index]
    assert "operationState" not in out_of_sync
    assert running["operationState"]["phase"] == "Running"  # type: ignore[index]
    assert done["operationState"]["phase"] == "Succeeded"  # type: ignore[index]
    assert done["operationState"]["syncResult"]["revision"] == "a" * 40  # type: ignore[index]
    assert done["sync"] == {**done["sync"], "status": "Synced", "revision": "a" * 40}  # type: ignore[dict-item]
    assert done["reconciledAt"] == "2026-01-01T00:00:15Z"


def test_health_is_progressing_during_rollout_then_healthy() -> None:
    sim, _ = _sim(EngineConfig())

    sim.run(10, step_s=5)
    early = _status(sim)["health"]
    sim.run(120, step_s=30)

    assert early == {"status": "Progressing"}
    assert _status(sim)["health"] == {"status": "Healthy"}


def test_new_head_goes_out_of_sync_then_synced_at_the_new_revision() -> None:
    sim, source = _sim(EngineConfig())
    sim.run(60, step_s=10)

    source.push("b" * 40, desired(APP))
    sim.tick()
    stale = _status(sim)["sync"]
    sim.run(30, step_s=5)

    assert stale["status"] == "OutOfSync"  # type: ignore[index]
    assert _status(sim)["sync"]["status"] == "Synced"  # type: ignore[index]
    assert [h["revision"] for h in _status(sim)["history"]] == ["a" * 40, "b" * 40]  # type: ignore[union-attr]


def test_sync_error_fails_the_operation_and_leaves_the_cluster_alone() -> None:
    sim, _ = _sim(EngineConfig(failure=SyncFailure.SYNC_ERROR))

    sim.run(60, step_s=10)

    status = _status(sim)
    assert status["operationState"]["phase"] == "Failed"  # type: ignore[index]
    assert status["sync"]["status"] == "OutOfSync"  # type: ignore[index]
    assert sim.cluster.observe().pods == ()


def test_slow_sync_stays_running_until_it_finishes() -> None:
    sim, _ = _sim(EngineConfig(failure=SyncFailure.SLOW_SYNC, slow_sync_s=100))

    sim.run(60, step_s=10)
    running = _status(sim)["operationState"]["phase"]  # type: ignore[index]
    sim.run(60, step_s=10)

    assert running == "Running"
    assert _status(sim)["operationState"]["phase"] == "Succeeded"  # type: ignore[index]


def test_stuck_progressing_never_reports_healthy() -> None:
    sim, _ = _sim(EngineConfig(failure=SyncFailure.STUCK_PROGRESSING))

    sim.run(600, step_s=60)

    assert all(p.ready for p in sim.cluster.observe().pods)
    assert _status(sim)["health"] == {"status": "Progressing"}
