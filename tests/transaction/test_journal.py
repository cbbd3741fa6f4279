"""The journal survives restarts, refuses forked history, and locks one writer per app."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import (
    Journal,
    JournalConflict,
    MachineConfig,
    Outcome,
    Phase,
    Record,
    Runner,
)
from gitmedic.reconciler.transaction.journal import UnknownTransaction
from tests.transaction.fakes import World, plan


def test_each_step_is_resumed_by_a_fresh_process(tmp_path: Path) -> None:
    clock = FakeClock(1000.0)
    world = World(clock, mu_after_fix=30.0)
    path = tmp_path / "j.sqlite"
    Journal(path).create(plan(), clock.now())
    for _ in range(200):
        journal = Journal(path)  # a new process each step: nothing but the journal survives
        advanced = Runner(journal, clock, MachineConfig()).step("inc-1/1", world)
        state = advanced.state
        if state.settled:
            break
        clock.sleep(advanced.wait_s)
    assert state.outcome is Outcome.REVERTED
    assert world.calls.count("open_pr") == 1 and world.calls.count("open_revert") == 1
    assert world.calls.count("merge:1") == 1 and world.calls.count("merge:2") == 1


def test_creating_twice_is_idempotent_and_unknown_ids_are_named(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    first = journal.create(plan(), 1.0)
    again = journal.create(plan(mu_pre=99.0), 2.0)
    assert again.plan == first.plan
    with pytest.raises(UnknownTransaction, match="no transaction 'nope'"):
        journal.load("nope")


def test_a_second_writer_of_the_same_step_loses(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.create(plan(), 1.0)
    journal.append("inc-1/1", Record(1, Phase.PR_OPENED, 2.0, {"pr": 1}))
    with pytest.raises(JournalConflict, match="step 1 of inc-1/1 was already written"):
        journal.append("inc-1/1", Record(1, Phase.PR_OPENED, 2.0, {"pr": 2}))
    assert journal.load("inc-1/1").pr == 1


def test_one_writer_per_app_and_takeover_after_expiry(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    assert journal.acquire("shop", "bot-a", now=0, ttl_s=60).acquired
    refused = journal.acquire("shop", "bot-b", now=30, ttl_s=60)
    assert not refused.acquired and refused.holder == "bot-a"
    assert journal.acquire("shop", "bot-a", now=40, ttl_s=60).acquired, "renewal by the holder"
    taken = journal.acquire("shop", "bot-b", now=101, ttl_s=60)
    assert taken.acquired and taken.taken_over_from == "bot-a"
    journal.release("shop", "bot-b")
    assert journal.acquire("shop", "bot-c", now=102, ttl_s=60).acquired
