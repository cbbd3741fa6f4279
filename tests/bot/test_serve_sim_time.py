"""``serve --cluster sim``: each monitor step runs the sim for the interval; a real clock waits.

Before, the sim's time passed only inside a transaction's waits, so under
``serve`` an incident opened but never outlived its debounce: nothing was
answered unless a test evaluated and slept by hand.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.health import Heartbeat
from gitmedic.bot.service.lock import SharedLock
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.wiring import Served, _elapse, wire
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.forge import PrState
from gitmedic.reconciler.transaction import Outcome
from tests.bot.service_kit import SECRET
from tests.bot.test_serve_lock import wait_until
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo

INTERVAL_S = 10.0


def serve_sim(root: Path, interval: float = INTERVAL_S) -> Served:
    repo = make_repo(root)  # catalog's targetPort broken on main
    args = argparse.Namespace(forge="local", cluster="sim", interval=interval, path=APP,
                              namespace=NAMESPACE, watch=None)  # fmt: skip
    settings = ServeSettings(SECRET, root / "state", repo)
    return wire(settings, args, {}, LocalForge(repo), repo, lambda: None)


def test_each_monitor_step_runs_the_sim_for_the_interval(tmp_path: Path) -> None:
    served = serve_sim(tmp_path)
    start = served.loop.clock.now()
    for steps in range(1, 4):
        served.monitor.step_once()
        assert served.loop.clock.now() == start + steps * INTERVAL_S


@pytest.mark.integration
def test_serve_with_the_sim_reaches_a_transaction_by_monitor_steps_alone(tmp_path: Path) -> None:
    served = serve_sim(tmp_path)
    debounce = served.loop.config.debounce_s
    journal = served.actions.journal
    for _ in range(int(debounce // INTERVAL_S) + 10):
        served.monitor.step_once()
        if journal.transactions():
            break
    # the fix, carried on by the next steps (a tick never waits for its window)
    (started,) = journal.transactions()
    for _ in range(200):
        if journal.load(started.plan.txn_id).settled:
            break
        served.monitor.step_once()
    (state,) = [t for t in journal.transactions() if t.plan.strategy != "memory"]
    assert state.plan.incident in served.loop.reports, "the loop's own incident, answered"
    opened = served.loop.reports[state.plan.incident].incident.opened_at
    assert state.records[0].at - opened > debounce, "answered once past its debounce"
    assert state.outcome is Outcome.COMMITTED, state.reason
    fix = served.actions.forge.get_pr(state.pr or 0)
    assert fix.state is PrState.MERGED


@pytest.mark.integration
def test_the_monitor_thread_advances_the_sim_without_help(tmp_path: Path) -> None:
    served = serve_sim(tmp_path, interval=0.01)  # wall and sim interval both short
    start = served.loop.clock.now()
    with served.running():
        assert wait_until(lambda: served.monitor.steps >= 5)
    # 1e-6: tiny steps on a clock near 1.7e9 s round in their last bits
    assert served.loop.clock.now() - start > 5 * 0.01 - 1e-6


def test_a_real_clock_is_not_slept_on_again_for_the_interval() -> None:
    wall = FakeClock(1_000.0)  # stands for the system clock: sleeping it only waits
    beats = Heartbeat(60.0)
    _elapse(cast(Any, SimpleNamespace(clock=wall)), "kube", SharedLock(), beats)(60.0)
    assert wall.now() == 1_000.0, "the monitor thread's own wait is the interval"
    sim = FakeClock(1_000.0)  # stands for the sim's clock: sleeping it runs the cluster
    _elapse(cast(Any, SimpleNamespace(clock=sim)), "sim", SharedLock(), beats)(60.0)
    assert sim.now() == 1_060.0
