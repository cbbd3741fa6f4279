"""The sim's sync watcher through the engine's phases, judged by the real Argo CD rule."""

from __future__ import annotations

import copy

from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.sync import SyncPhase, SyncState, SyncWatcher, assess_application
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.engine import EngineConfig, MemorySource, SyncFailure
from gitmedic.sim.runtime import Sim
from gitmedic.sim.stamps import EPOCH
from gitmedic.sim.watcher import SimWatcher
from tests.sim.helpers import desired
from tests.support.stepping import polled

APP = "online-boutique"
BASE, NEXT = "a" * 40, "b" * 40


def _settled(config: EngineConfig | None = None) -> tuple[Sim, MemorySource, SimWatcher]:
    """A sim whose engine tracks a branch at BASE (online-boutique), and its watcher."""
    base = desired(APP)
    source = MemorySource({BASE: base}, BASE)
    catalog = ImageCatalog.from_snapshots([base])
    sim = Sim(source, catalog, FakeClock(EPOCH), engine_config=config or EngineConfig())
    return sim, source, SimWatcher(sim)


def _poll(sim: Sim, watcher: SimWatcher, sha: str, for_s: float) -> list[SyncState]:
    """The watcher asked every 5 s, as a sync wait polls, for at most ``for_s`` seconds."""
    return polled(watcher, sha, sim.clock, every=5, for_s=for_s)


def test_is_a_sync_watcher_and_agrees_with_the_argo_rule_on_the_same_object() -> None:
    sim, _, watcher = _settled()
    checker: SyncWatcher = watcher

    state = checker.check(BASE)

    again = assess_application(sim.engine.application(), BASE, sim.clock.now())
    assert (state.phase, state.message) == (again.phase, again.message)
    assert state.phase is SyncPhase.PROGRESSING


def test_deployed_once_synced_and_every_pod_ready() -> None:
    sim, _, watcher = _settled()

    start = sim.clock.now()
    answers = _poll(sim, watcher, BASE, 300)

    assert answers[-1].phase is SyncPhase.DEPLOYED
    assert answers[-1].revision == BASE
    assert all(p.ready for p in sim.cluster.observe().pods)
    # pods need seconds to become Ready after the 5 s sync: Healthy is not immediate
    assert 10 <= sim.clock.now() - start <= 120


def test_a_new_head_is_not_deployed_until_its_own_sync_finishes() -> None:
    sim, source, watcher = _settled()
    assert _poll(sim, watcher, BASE, 300)[-1].phase is SyncPhase.DEPLOYED

    source.push(NEXT, desired(APP))
    first = watcher.check(NEXT)
    answers = _poll(sim, watcher, NEXT, 300)

    assert first.phase is SyncPhase.PROGRESSING
    assert BASE in first.message  # "last successful sync applied BASE, not NEXT"
    assert answers[-1].phase is SyncPhase.DEPLOYED
    assert watcher.check(BASE).phase is SyncPhase.PROGRESSING  # BASE is no longer what runs


def test_slow_sync_stays_progressing_until_the_operation_ends() -> None:
    sim, _, watcher = _settled(EngineConfig(slow_sync_s=180, failure=SyncFailure.SLOW_SYNC))

    early = _poll(sim, watcher, BASE, 60)
    late = _poll(sim, watcher, BASE, 300)

    # 60 s of polls, none an answer that ends a sync wait (its timeout would)
    assert {a.phase for a in early} == {SyncPhase.PROGRESSING} and len(early) == 13
    assert "sync operation Running" in early[-1].message
    assert late[-1].phase is SyncPhase.DEPLOYED
    assert sim.clock.now() - EPOCH >= 180


def test_sync_error_is_failed_with_the_operation_message() -> None:
    sim, _, watcher = _settled(EngineConfig(failure=SyncFailure.SYNC_ERROR))

    answers = _poll(sim, watcher, BASE, 300)

    assert answers[-1].phase is SyncPhase.FAILED
    assert "admission webhook denied" in answers[-1].message
    assert sim.clock.now() - EPOCH < 30  # failed is terminal: no waiting out the timeout


def test_stuck_progressing_health_times_out_although_the_sync_succeeded() -> None:
    sim, _, watcher = _settled(EngineConfig(failure=SyncFailure.STUCK_PROGRESSING))

    answers = _poll(sim, watcher, BASE, 240)

    status = sim.engine.application()["status"]
    assert status["operationState"]["phase"] == "Succeeded"
    assert {a.phase for a in answers} == {SyncPhase.PROGRESSING}  # for all of the 240 s
    assert "health is Progressing" in answers[-1].message
    assert sim.clock.now() - EPOCH == 240


def test_a_broken_revision_is_synced_but_never_deployed() -> None:
    sim, source, watcher = _settled()
    assert _poll(sim, watcher, BASE, 300)[-1].phase is SyncPhase.DEPLOYED
    broken = Snapshot([_bad_image(o) for o in desired(APP)], revision=NEXT)

    source.push(NEXT, broken)
    answers = _poll(sim, watcher, NEXT, 120)

    assert {a.phase for a in answers} == {SyncPhase.PROGRESSING}  # for all of the 120 s
    assert answers[-1].revision == NEXT
    assert "health is" in answers[-1].message  # synced, but the app is not Healthy


def _bad_image(obj: Obj) -> Obj:
    """adservice's Deployment with an image tag the registry does not have."""
    if (obj.kind, obj.name) != ("Deployment", "adservice"):
        return obj
    body = copy.deepcopy(dict(obj.body))
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "adservice:does-not-exist"
    return Obj(obj.ref, body, obj.source)
