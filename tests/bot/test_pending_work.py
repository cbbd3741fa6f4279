"""Watches and queued retries survive a restart of serve and are carried out once, by ticks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.transactions.intents import Intents
from gitmedic.reconciler.forge import PrState
from gitmedic.reconciler.transaction import Phase
from gitmedic.reconciler.transaction.window import Measurement, Stage
from tests.bot.test_actions_live import World, broken_image, waiting, watch_ticks
from tests.transaction.e2e_world import plan


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_a_watch_survives_a_restart_and_is_judged_once(world: World) -> None:
    pr, sha = broken_image(world)
    world.actions.watch_merge(pr, sha)
    world.actions.watch_merge(pr, sha)  # a redelivery
    world.restart(mu_now=9.0)
    (watch,) = world.actions.watches
    assert (watch.pr, watch.merge_sha, watch.plan.mu_pre) == (pr, sha, 5.0), "mu before, kept"
    state = watch_ticks(world, sha)
    world.restart()
    world.tick()  # a later process: nothing left to offer again
    (revert,) = world.forge.find_prs({"reverts": pr})
    assert revert.state is PrState.OPEN, "offered once, not merged"
    assert state.phase is Phase.AWAITING_APPROVAL and state.revert_pr == revert.number
    assert "mu was 5 before" in world.forge.list_comments(revert.number)[0].body
    assert MU_EXPLAINED in world.forge.list_comments(revert.number)[0].body


def window_of(world: World, *, restart_after: int | None) -> tuple[Measurement, ...]:
    """A harmless merge watched to its verdict; with ``restart_after``, the process is
    replaced once that many window measurements are journaled (killed mid-window)."""
    pr, sha = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    world.actions.watch_merge(pr, sha)
    txn_id = f"watch/{sha}"
    for _ in range(60):
        world.tick()
        state = world.journal.load(txn_id)
        taken = state.measured(Stage.WINDOW, sha)
        if restart_after is not None and len(taken) >= restart_after:
            assert state.phase is Phase.SYNCED, "still in its window"
            world.restart()
            resumed = world.journal.load(txn_id)
            assert resumed.measured(Stage.WINDOW, sha) == taken, "the journal keeps them"
            restart_after = None
        if state.settled:
            break
        world.clock.sleep(10)
    final = world.journal.load(txn_id)
    assert final.settled and final.phase is Phase.COMMITTED, final.reason
    assert world.forge.find_prs({"reverts": pr}) == ()
    return final.measured(Stage.WINDOW, sha)


def test_a_watch_resumes_mid_window_from_the_journal_its_measurements_counted(
    tmp_path: Path,
) -> None:
    whole = window_of(World(tmp_path / "a"), restart_after=None)
    resumed = window_of(World(tmp_path / "b"), restart_after=2)
    assert len(whole) > 2, "a window of several measurements"
    assert len(resumed) == len(whole), "counted across the restart, not started again"
    assert [m.at for m in resumed] == [m.at for m in whole], "on the same schedule"


def test_a_watch_not_yet_judged_is_kept_across_restarts(world: World) -> None:
    pr, sha = broken_image(world)
    world.actions.watch_merge(pr, sha)
    world.tick()  # merged, not deployed yet: the engine needs 20 s
    kept = [w.plan.txn_id for w in world.actions.watches]
    world.restart()
    assert [w.plan.txn_id for w in world.actions.watches] == kept != []
    assert world.forge.find_prs({"reverts": pr}) == ()


def test_a_queued_retry_survives_a_restart_and_runs_once(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    world.actions.retry(state.pr)
    world.actions.retry(state.pr)  # twice: one item
    world.restart()
    assert world.actions.retries == ["inc-1"]
    world.tick()
    world.tick()
    world.restart()
    world.tick()
    assert world.retried == ["inc-1"]
    assert world.actions.retries == []


def test_a_retry_that_ran_before_a_crash_is_not_run_again(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    world.actions.retry(state.pr)

    def crash_after_starting(incident: str) -> str:
        second = replace(
            plan(world.repo, "good"),
            txn_id="inc-1/attempt-2",
            attempt=2,
            branch="gitmedic/inc-1/attempt-2",
        )
        world.journal.create(second, world.clock.now())
        raise SystemExit("killed after the new attempt was journaled")

    world.retry_incident = crash_after_starting
    with pytest.raises(SystemExit):
        world.tick()
    world.restart()
    world.retry_incident = world._retry
    world.tick()
    assert world.retried == [], "the journal shows the attempt: not a second one"
    assert world.actions.retries == []
    attempt = world.journal.load("inc-1/attempt-2")
    assert attempt.phase is not Phase.PLANNED, "the started attempt itself is resumed"


def test_an_incident_can_be_queued_again_once_its_retry_ran(tmp_path: Path) -> None:
    pending = Intents(tmp_path / "journal.sqlite")
    assert pending.add("retry", "inc-1", {"attempts": 1}, 1.0)
    assert not pending.add("retry", "inc-1", {"attempts": 1}, 2.0)
    pending.finish("retry", "inc-1", "attempt 2: committed")
    assert pending.items("retry") == []
    assert pending.add("retry", "inc-1", {"attempts": 2}, 3.0), "a later retry is a new item"
    assert [i.data["attempts"] for i in pending.items("retry")] == [2]


def test_a_watch_queued_by_a_serve_of_before_is_started_as_its_transaction(world: World) -> None:
    pr, sha = broken_image(world)
    asked = world.clock.now()
    # What serve wrote before watches were transactions: an intent with mu and the time asked.
    world.intents.add("watch", sha, {"pr": pr, "mu_pre": 5.0, "since": asked}, asked)
    world.clock.sleep(5)
    world.restart(mu_now=9.0)  # the upgraded serve
    world.tick()
    assert world.intents.items("watch") == [], "done: it is a transaction now"
    watch = world.journal.load(f"watch/{sha}")
    assert (watch.pr, watch.plan.mu_pre, watch.merged_at) == (pr, 5.0, asked), "as asked"
    state = watch_ticks(world, sha)
    (revert,) = world.forge.find_prs({"reverts": pr})
    assert state.revert_pr == revert.number and revert.state is PrState.OPEN, "offered"
