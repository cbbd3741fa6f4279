"""Watches and queued retries survive a restart of serve's actions and are carried out once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.pending import PendingWork
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.service.live_actions import LiveActions, Watch
from gitmedic.reconciler.forge import PrState
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot.test_actions_live import World, waiting
from tests.transaction.e2e_world import CONFIG, plan


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def restarted(world: World, mu_now: float = 9.0) -> LiveActions:
    """A new process: new actions over a new Journal of the same state file, mu changed."""
    return LiveActions(
        world.forge, Journal(world.journal.path), lambda: world.ports, world.clock,
        app="shop", mu_now=lambda: mu_now, retry=world._retry, machine=CONFIG,
    )  # fmt: skip


def broken_image_merge(world: World) -> tuple[int, str]:
    image = "image: ghcr.io/gitmedic/shop-catalog:"
    text = (world.repo / "apps/shop/catalog.yaml").read_text()
    tag = text.split(image, 1)[1].split()[0]
    return world.human_merge("bob/img", "catalog.yaml", image + tag, image + "9.9.9-broken")


def test_a_watch_survives_a_restart_and_is_judged_once(world: World) -> None:
    pr, sha = broken_image_merge(world)
    world.actions.watch_merge(pr, sha)
    world.actions.watch_merge(pr, sha)  # a redelivery
    actions = restarted(world)
    assert actions.watches == [Watch(pr, sha, 5.0, world.clock.now())], "mu before, kept"
    for _ in range(5):
        actions.work()
        world.clock.sleep(10)
    world.actions.work()  # the old object's view is the same database: nothing left
    (revert,) = world.forge.find_prs({"reverts": pr})
    assert revert.state is PrState.OPEN, "offered once, not merged"
    assert "mu was 5 before" in world.forge.list_comments(revert.number)[0].body
    assert MU_EXPLAINED in world.forge.list_comments(revert.number)[0].body
    assert actions.watches == [] and restarted(world).watches == []


def test_a_watch_not_yet_judged_is_kept_across_restarts(world: World) -> None:
    pr, sha = broken_image_merge(world)
    world.actions.watch_merge(pr, sha)
    world.actions.work()  # merged, not deployed yet: the engine needs 20 s
    assert restarted(world).watches == world.actions.watches != []
    assert world.forge.find_prs({"reverts": pr}) == ()


def test_a_queued_retry_survives_a_restart_and_runs_once(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    world.actions.retry(state.pr)
    world.actions.retry(state.pr)  # twice: one item
    actions = restarted(world)
    assert actions.retries == ["inc-1"]
    actions.work()
    actions.work()
    restarted(world).work()
    assert world.retried == ["inc-1"]
    assert actions.retries == []


def test_a_retry_that_ran_before_a_crash_is_not_run_again(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    world.actions.retry(state.pr)

    def crash_after_starting(incident: str) -> str:
        second = replace(plan(world.repo, "good"), txn_id="inc-1/attempt-2", attempt=2,
                         branch="gitmedic/inc-1/attempt-2")  # fmt: skip
        world.journal.create(second, world.clock.now())
        raise SystemExit("killed after the new attempt was journaled")

    world.actions.retry_incident = crash_after_starting
    with pytest.raises(SystemExit):
        world.actions.work()
    actions = restarted(world)
    actions.work()
    assert world.retried == [], "the journal shows the attempt: not a second one"
    assert actions.retries == []
    attempt = world.journal.load("inc-1/attempt-2")
    assert attempt.phase is not Phase.PLANNED, "the started attempt itself is resumed"


def test_an_incident_can_be_queued_again_once_its_retry_ran(tmp_path: Path) -> None:
    pending = PendingWork(tmp_path / "journal.sqlite")
    assert pending.add("retry", "inc-1", {"attempts": 1}, 1.0)
    assert not pending.add("retry", "inc-1", {"attempts": 1}, 2.0)
    pending.finish("retry", "inc-1", "attempt 2: committed")
    assert pending.items("retry") == []
    assert pending.add("retry", "inc-1", {"attempts": 2}, 3.0), "a later retry is a new item"
    assert [i.data["attempts"] for i in pending.items("retry")] == [2]
