"""The loop and the app's one-writer lock: it waits for a live holder and takes over a dead one."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.report import Event
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.transaction import Journal, Phase
from gitmedic.reconciler.transaction.lease import Lease, WriterLease
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo


def _loop(
    tmp_path: Path,
    events: list[Event],
    *,
    repo: Path | None = None,
    on_event: Callable[[Event], None] | None = None,
    lease: WriterLease | None = None,
) -> Loop:
    repo = repo or make_repo(tmp_path)  # catalog's targetPort broken on main
    config = LoopConfig("shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY)
    return Loop(config, SimCluster(repo, APP, NAMESPACE), LocalForge(repo),
                Journal(tmp_path / "j.sqlite"), list(builtin_registry()),
                on_event=on_event or events.append, lease=lease)  # fmt: skip


@pytest.mark.integration
def test_a_lock_whose_holder_died_is_taken_over_and_the_takeover_is_reported(
    tmp_path: Path,
) -> None:
    events: list[Event] = []
    loop = _loop(tmp_path, events)
    dead = "gitmedic-serve@old-pod"
    # the lease runs on the wall clock (processes share no other): this one expired long ago
    assert loop.journal.acquire("shop", dead, time.time() - 7200, 60).acquired

    assert loop.run_once() is True
    (takeover,) = [e for e in events if e.kind == "lock"]
    assert takeover.data["previous"] == dead and "lease had expired" in takeover.text
    assert loop.lease.holder.split(":")[1] == str(os.getpid()), "a holder id of this process"
    (report,) = loop.reports.values()
    assert [t.outcome.value for t in report.transactions] == ["committed"]


@pytest.mark.integration
def test_a_live_holder_is_waited_for_and_nothing_is_changed(tmp_path: Path) -> None:
    events: list[Event] = []
    loop = _loop(tmp_path, events)
    assert loop.journal.acquire("shop", "gitmedic-serve@live", time.time(), 7200).acquired

    loop.run_once(max_seconds=120)
    assert next(e.text for e in events if e.kind == "lock").endswith(
        "is locked by gitmedic-serve@live; waiting"
    )
    assert all(not r.transactions for r in loop.reports.values())
    assert LocalForge(loop.config.repo).list_prs() == ()


class _Killed(Exception):
    """The other writer's process, gone right after a journal write."""


@pytest.mark.integration
def test_a_loop_that_takes_the_lock_over_again_resumes_what_the_other_writer_left(
    tmp_path: Path,
) -> None:
    """A replica that held the app before (and resumed the journal then) and takes it
    back from a writer killed mid-transaction carries that transaction on at once: the
    fix is merged, the app heals, so no incident of its own would ever reach it."""
    events: list[Event] = []
    heir = _loop(tmp_path, events)
    heir.step()  # holds the app: the journal resumed (nothing yet), the fault just seen
    assert heir.resumed
    heir.lease.release()  # handed over

    def killed_after_merge(event: Event) -> None:
        if event.data.get("phase") == "merged":
            raise _Killed

    # the other replica's writer row expires by the wall clock long before anyone looks
    gone = Lease(heir.journal, "shop", "other-node:7:dead", ttl_s=60, clock=lambda: 1.0)
    writer = _loop(tmp_path, [], repo=heir.config.repo, on_event=killed_after_merge, lease=gone)
    with pytest.raises(_Killed):
        writer.run_once()
    (left,) = heir.txns.unsettled()
    assert left.phase is Phase.MERGED

    heir.step()  # the takeover's tick: resumes it at once (until it must wait)

    (takeover,) = [e for e in events if e.kind == "lock"]
    assert takeover.data["previous"] == "other-node:7:dead"
    assert f"resuming {left.plan.txn_id} at merged" in [e.text for e in events]
    for _ in range(1000):  # the next ticks carry it on, each when it is due
        if not heir.in_flight():
            break
        heir.tick()
    done = heir.journal.load(left.plan.txn_id)
    assert done.settled and done.phase is Phase.COMMITTED, done.phase
