"""ForgeIntents, serve's own BotActions: labels, gated merges, reverts of anyone's PR, intents."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.actions import ActionRefused
from gitmedic.bot.intents import APPROVED, HOLD, ForgeIntents, IntentLog
from gitmedic.reconciler.forge import PrState, StatusState
from tests.bot.fakes import Scene, scene
from tests.forge.backends import commit_files


@pytest.fixture
def world(tmp_path: Path) -> Scene:
    return scene(tmp_path)


@pytest.fixture
def intents(world: Scene, tmp_path: Path) -> ForgeIntents:
    return ForgeIntents(world.forge, IntentLog(tmp_path / "state" / "intents.sqlite"))


def test_approve_hold_unhold_are_labels(world: Scene, intents: ForgeIntents) -> None:
    intents.approve(world.bot_pr)
    intents.hold(world.bot_pr)
    assert world.forge.get_pr(world.bot_pr).labels == (APPROVED, HOLD)
    intents.unhold(world.bot_pr)
    intents.unhold(world.bot_pr)  # idempotent
    assert world.forge.get_pr(world.bot_pr).labels == (APPROVED,)


def test_merge_waits_for_the_gate(world: Scene, intents: ForgeIntents) -> None:
    with pytest.raises(ActionRefused, match="gitmedic/gate check has not passed"):
        intents.merge(world.bot_pr)
    head = world.forge.get_pr(world.bot_pr).head_sha
    world.forge.set_status(head, "gitmedic/gate", StatusState.SUCCESS, "green")
    assert "Merged #1" in intents.merge(world.bot_pr)
    assert world.forge.get_pr(world.bot_pr).state is PrState.MERGED


def test_revert_opens_a_revert_pr_for_a_persons_merged_pr(
    world: Scene, intents: ForgeIntents
) -> None:
    commit_files(world.repo, "bob/scale", {"apps/web/deployment.yaml": "replicas: 9\n"}, "main")
    pr = world.forge.open_pr_as("bob", "bob/scale", "main", "Scale", "")
    merge_sha = world.forge.merge(pr.number, pr.head_sha)
    reply = intents.revert(pr.number)
    again = intents.revert(pr.number)  # idempotent: the same revert PR
    revert = world.forge.find_pr(f"revert-{pr.number}-bob/scale")
    assert revert is not None and f"Opened #{revert.number}" in reply and reply == again
    assert intents.log.pending() == [
        (1, "revert", {"pr": pr.number, "revert_pr": revert.number, "merge_sha": merge_sha})
    ]


def test_refusals_say_why(world: Scene, intents: ForgeIntents) -> None:
    with pytest.raises(ActionRefused, match="is open, not merged: nothing to revert"):
        intents.revert(world.bot_pr)
    commit_files(world.repo, "bob/x", {"README.md": "y\n"}, "main")
    human = world.forge.open_pr_as("bob", "bob/x", "main", "X", "")
    with pytest.raises(ActionRefused, match="works on gitmedic's PRs"):
        intents.approve(human.number)
    assert "was not opened by gitmedic" in intents.explain(human.number)


def test_retry_closes_the_attempt_and_records_an_intent(
    world: Scene, intents: ForgeIntents
) -> None:
    intents.retry(world.bot_pr)
    assert world.forge.get_pr(world.bot_pr).state is PrState.CLOSED
    assert intents.log.pending() == [(1, "retry", {"pr": world.bot_pr, "incident": "inc-1"})]


def test_explain_reads_the_hidden_state(world: Scene, intents: ForgeIntents) -> None:
    assert intents.explain(world.bot_pr) == (
        '#1 is open. Its state: incident: "inc-1". Labels: none.'
    )


def test_watch_requests_are_recorded_once(intents: ForgeIntents) -> None:
    intents.watch_merge(3, "abc")
    intents.watch_merge(3, "abc")
    intents.main_moved("def")
    assert [(kind, data) for _, kind, data in intents.log.pending()] == [
        ("watch", {"pr": 3, "merge_sha": "abc"}),
        ("main-moved", {"sha": "def"}),
    ]
    intents.log.mark_done(1)
    assert len(intents.log.pending()) == 1
