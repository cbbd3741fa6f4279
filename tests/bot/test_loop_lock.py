"""The loop and the app's one-writer lock: it waits for a live holder and takes over a dead one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.loop.loop import Loop, LoopConfig
from gitmedic.bot.loop.report import Event
from gitmedic.bot.loop.sim_cluster import SimCluster
from gitmedic.bot.run_cmd import DEFAULT_POLICY
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.transaction import Journal
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo


def _loop(tmp_path: Path, events: list[Event]) -> Loop:
    repo = make_repo(tmp_path)  # catalog's targetPort broken on main
    config = LoopConfig("shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY)
    return Loop(config, SimCluster(repo, APP, NAMESPACE), LocalForge(repo),
                Journal(tmp_path / "j.sqlite"), list(builtin_registry()),
                on_event=events.append)  # fmt: skip


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
