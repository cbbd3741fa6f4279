"""``/gitmedic hold`` once the PR merged: nothing can be held, and the reply says what happens.

In the sync wait and the verification window the transaction goes on as it
would without the hold (a regression is reverted automatically), no hold label
is set, and the reply points to ``/gitmedic revert`` to undo now. A hold on an
open PR is unchanged (tests/bot/test_actions_live.py, test_serve_hold.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import Journal, Outcome, Phase
from gitmedic.reconciler.transaction.forge_ports import HOLD_LABEL
from tests.bot.test_actions_live import World, port, waiting
from tests.transaction.e2e_world import plan, ports


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


class HoldInTheWindow(FakeClock):
    """The clock of the world: the first wait between two ticks of a verification window
    sends a hold, as a person's comment lands between the ticks of serve's monitor."""

    def __init__(self, start: float, journal: Journal) -> None:
        super().__init__(start)
        self.journal = journal
        self.hold: Callable[[int], str] | None = None
        self.replies: list[tuple[Phase, str]] = []

    def sleep(self, seconds: float) -> None:
        state = self.journal.transactions()[-1] if self.journal.transactions() else None
        if self.hold and state and state.phase is Phase.SYNCED and state.pr is not None:
            hold, self.hold = self.hold, None
            self.replies.append((state.phase, hold(state.pr)))
        super().sleep(seconds)


def holding_world(root: Path) -> tuple[World, HoldInTheWindow]:
    world = World(root)
    clock = HoldInTheWindow(world.clock.now(), world.journal)
    world.clock, world.ports = clock, ports(world.repo, clock)
    world.process(5.0)  # the commands and the runner on that clock
    clock.hold = world.actions.hold
    return world, clock


def test_a_hold_in_the_sync_wait_says_the_regression_is_still_reverted(world: World) -> None:
    state = world.start(plan(world.repo, "broken-image"))  # auto-merge: merged at once
    assert state.phase is Phase.MERGED and state.pr is not None and state.merge_sha
    reply = world.actions.hold(state.pr)
    assert reply.startswith(f"#{state.pr} is already merged (`{state.merge_sha[:12]}`)")
    assert "a hold cannot stop it" in reply and "waits for the engine to deploy it" in reply
    assert "still reverted automatically" in reply and "`/gitmedic revert`" in reply
    assert HOLD_LABEL not in world.forge.get_pr(state.pr).labels, "nothing is held"
    final = world.settle(state.plan.txn_id)
    assert final.outcome is Outcome.REVERTED, "the regression is reverted all the same"
    assert port(world) == "3551", "main is back where it was"


def test_a_hold_in_the_verification_window_says_the_window_continues(tmp_path: Path) -> None:
    world, clock = holding_world(tmp_path)
    state = world.settle(world.start(plan(world.repo, "good")).plan.txn_id)
    ((phase, reply),) = clock.replies
    assert phase is Phase.SYNCED and state.pr is not None
    assert reply.startswith(f"#{state.pr} is already merged")
    assert "it is deployed and in its verification window, which continues" in reply
    assert "still reverted automatically" in reply and "`/gitmedic revert`" in reply
    assert state.outcome is Outcome.COMMITTED, "the hold changed nothing"
    assert HOLD_LABEL not in world.forge.get_pr(state.pr).labels


def test_a_hold_after_the_verdict_says_what_became_of_the_change(world: World) -> None:
    kept = world.settle(world.start(plan(world.repo, "good")).plan.txn_id)
    assert kept.outcome is Outcome.COMMITTED and kept.pr is not None
    assert "it was verified and kept, so nothing is left to hold" in world.actions.hold(kept.pr)


def test_a_hold_after_an_automatic_revert_says_it_was_reverted(world: World) -> None:
    undone = world.settle(world.start(plan(world.repo, "broken-image")).plan.txn_id)
    assert undone.phase is Phase.RESTORED and undone.pr is not None
    assert "it was already reverted" in world.actions.hold(undone.pr)


def test_a_hold_on_an_open_pr_still_holds_it(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    assert world.actions.hold(state.pr).startswith(f"Holding #{state.pr}: it will not be merged")
    assert HOLD_LABEL in world.forge.get_pr(state.pr).labels
