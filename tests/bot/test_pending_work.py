"""Watches and queued retries survive a restart of serve and are carried out once, by ticks."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.transactions.intents import Intents
from gitmedic.reconciler.forge import PrState
from gitmedic.reconciler.transaction import Journal, Phase
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
    pending = Intents(Journal(tmp_path / "journal.sqlite"), "shop")
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


# What serve kept before intents were journal rows: a ``pending`` table, no app column, in
# the SQLite file beside the journal (the journal's own file, or local.sqlite beside a
# PostgreSQL journal).
OLD_PENDING = """
CREATE TABLE pending (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
    queued REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0, result TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX pending_open ON pending (kind, key) WHERE done = 0;
INSERT INTO pending (kind, key, data, queued, done, result) VALUES
    ('retry', 'inc-1', '{"attempts": 1, "pr": 4}', 20.0, 0, ''),
    ('merge', '9', '{"pr": 9}', 10.0, 0, ''),
    ('retry', 'inc-0', '{"attempts": 1, "pr": 2}', 5.0, 1, 'attempt 2 started');
"""


def _old_serve_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_PENDING)


def _moved(path: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT key, done, result FROM pending ORDER BY id"))


def _adopted_by_the_app_whose_state_it_is(journal: Journal, path: Path) -> None:
    intents = Intents(journal, "shop")
    opened = intents.open()
    assert [i.key for i in opened["merge"]] == ["9"] and [i.key for i in opened["retry"]] == [
        "inc-1"
    ], "the open rows, oldest first; the one done before stays done"
    assert dict(opened["retry"][0].data) == {"attempts": 1, "pr": 4}
    assert journal.intents("cart") == []
    assert _moved(path) == [
        ("inc-1", 1, "moved to the journal's intents"),
        ("9", 1, "moved to the journal's intents"),
        ("inc-0", 1, "attempt 2 started"),
    ], "the old rows stay, as the record of the move"
    Intents(journal, "shop")  # serve's commands open them too: nothing moved twice
    assert [i.key for i in journal.intents("shop")] == ["9", "inc-1"]


def test_a_serve_of_before_s_pending_work_becomes_the_app_s_intents(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    _old_serve_file(path)
    _adopted_by_the_app_whose_state_it_is(Journal(path), path)


@pytest.mark.integration
def test_beside_a_postgresql_journal_the_local_file_s_work_moves_into_it(
    tmp_path: Path, postgres_url: str
) -> None:
    local = tmp_path / "state" / "local.sqlite"
    _old_serve_file(local)
    _adopted_by_the_app_whose_state_it_is(Journal(postgres_url, local=local), local)
    other = Journal(postgres_url)  # another replica, with no local file of its own
    assert [i.key for i in Intents(other, "shop").items("retry")] == ["inc-1"], "shared"
