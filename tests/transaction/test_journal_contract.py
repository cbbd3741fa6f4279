"""The journal's contract, run on both of its databases: the embedded SQLite file and a real
PostgreSQL (tests/support/postgres.py; that half is integration and skips, saying why, when
no server can be had). Every test takes ``target``, a SQLite path or a PostgreSQL URL, and
opens it as many times as it needs processes or replicas: each ``Journal`` is its own
connection."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import (
    IncidentRow,
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

Target = Path | str

# 2026's epoch seconds with milliseconds: PostgreSQL's 4-byte REAL would round them
# to 128 s, so a lease would expire minutes early or late.
EPOCH = 1_795_000_000.125


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "sqlite":
        return tmp_path / "journal.sqlite"
    url: str = request.getfixturevalue("postgres_url")
    return url


# -- transactions -----------------------------------------------------------------------


def test_each_step_is_resumed_by_a_fresh_process(target: Target) -> None:
    clock = FakeClock(EPOCH)
    world = World(clock, mu_after_fix=30.0)
    Journal(target).create(plan(), clock.now())
    for _ in range(200):
        journal = Journal(target)  # a new process each step: nothing but the journal survives
        advanced = Runner(journal, clock, MachineConfig()).step("inc-1/1", world)
        state = advanced.state
        if state.settled:
            break
        clock.sleep(advanced.wait_s)
    assert state.outcome is Outcome.REVERTED
    assert world.calls.count("open_pr") == 1 and world.calls.count("open_revert") == 1
    assert world.calls.count("merge:1") == 1 and world.calls.count("merge:2") == 1
    assert [r.seq for r in state.records] == list(range(1, len(state.records) + 1))


def test_creating_twice_is_idempotent_and_unknown_ids_are_named(target: Target) -> None:
    journal = Journal(target)
    first = journal.create(plan(), EPOCH)
    again = Journal(target).create(plan(mu_pre=99.0), EPOCH + 1)
    assert again.plan == first.plan and again.plan.mu_pre == 10.0
    with pytest.raises(UnknownTransaction, match="no transaction 'nope'"):
        journal.load("nope")


def test_a_second_writer_of_the_same_step_loses_and_history_is_not_forked(target: Target) -> None:
    one, two = Journal(target), Journal(target)
    one.create(plan(), EPOCH)
    one.append("inc-1/1", Record(1, Phase.PR_OPENED, EPOCH + 1, {"pr": 1}))
    with pytest.raises(JournalConflict, match="step 1 of inc-1/1 was already written"):
        two.append("inc-1/1", Record(1, Phase.PR_OPENED, EPOCH + 2, {"pr": 2}))
    two.append("inc-1/1", Record(2, Phase.GATED, EPOCH + 3, {"gate": "ok"}))
    state = one.load("inc-1/1")
    assert state.pr == 1 and [r.seq for r in state.records] == [1, 2]
    assert state.records[0].at == EPOCH + 1, "times keep their precision"


def test_transactions_are_listed_by_app_and_incident_oldest_first(target: Target) -> None:
    journal = Journal(target)
    second = replace(plan(), txn_id="inc-1/2", attempt=2)
    other = replace(plan(), txn_id="inc-9/1", app="cart", incident="inc-9")
    journal.create(second, EPOCH + 10)
    journal.create(plan(), EPOCH)
    journal.create(other, EPOCH + 5)
    assert [t.plan.txn_id for t in journal.transactions()] == ["inc-1/1", "inc-9/1", "inc-1/2"]
    assert [t.plan.txn_id for t in journal.transactions(app="shop")] == ["inc-1/1", "inc-1/2"]
    assert [t.plan.txn_id for t in journal.transactions(incident="inc-9")] == ["inc-9/1"]


# -- incidents --------------------------------------------------------------------------


def test_an_incident_is_one_row_updated_in_place_and_found_by_status(target: Target) -> None:
    journal = Journal(target)
    row = IncidentRow("inc-1", "shop", "open", EPOCH, ("fp-a", "fp-b"), {"findings": [1]})
    journal.save_incident(row)
    Journal(target).save_incident(replace(row, status="resolved"))
    journal.save_incident(IncidentRow("inc-2", "shop", "open", EPOCH + 1))
    noted = journal.note_memory("inc-1", "opened", pr=7)
    assert noted.data["memory"] == {"step": "opened", "pr": 7}
    found = journal.incident("inc-1")
    assert found is not None and found.status == "resolved" and found.opened == EPOCH
    assert found.fingerprints == ("fp-a", "fp-b") and found.data["findings"] == [1]
    assert [r.id for r in journal.incidents("shop")] == ["inc-1", "inc-2"]
    assert [r.id for r in journal.incidents("shop", status="open")] == ["inc-2"]
    assert journal.incident("nope") is None
    with pytest.raises(UnknownTransaction):
        journal.note_memory("nope", "opened")


def test_incidents_are_listed_in_the_journal_s_order_not_by_their_clock(target: Target) -> None:
    """Each ``run`` starts the sim's clock at the same epoch: an incident a restarted process
    opened can carry an earlier (or the same) time than the one before it."""
    journal = Journal(target)
    journal.save_incident(IncidentRow("shop-zz", "shop", "resolved", EPOCH + 300))
    journal.save_incident(IncidentRow("shop-yy", "shop", "resolved", EPOCH))
    journal.save_incident(IncidentRow("cart-aa", "cart", "open", EPOCH))
    Journal(target).save_incident(IncidentRow("shop-xx", "shop", "open", EPOCH))
    journal.save_incident(IncidentRow("shop-zz", "shop", "escalated", EPOCH + 300))  # in place
    assert [r.id for r in journal.incidents("shop")] == ["shop-zz", "shop-yy", "shop-xx"]
    assert [r.id for r in journal.incidents("shop", status="resolved")] == ["shop-yy"]


def test_a_journal_from_before_the_order_keeps_its_incidents_in_theirs(target: Target) -> None:
    """A journal written before incidents had their place in the journal's order: its rows
    come first, in the order they were inserted where the database knows it (SQLite's
    rowid) and else in the order they were listed in (by the time they opened), and new
    ones after them."""
    _old_incidents(target, [("shop-zz", EPOCH + 300), ("shop-yy", EPOCH)])
    journal = Journal(target)
    journal.save_incident(IncidentRow("shop-xx", "shop", "open", EPOCH))
    before = ["shop-zz", "shop-yy"] if isinstance(target, Path) else ["shop-yy", "shop-zz"]
    assert [r.id for r in Journal(target).incidents("shop")] == [*before, "shop-xx"]


def _old_incidents(target: Target, rows: list[tuple[str, float]]) -> None:
    """The incidents table as it was before ``seq``, holding ``rows`` (id, opened)."""
    create = (
        "CREATE TABLE incidents (id TEXT PRIMARY KEY, app TEXT NOT NULL, status TEXT NOT NULL,"
        " opened DOUBLE PRECISION NOT NULL, data TEXT NOT NULL)"
    )
    insert = "INSERT INTO incidents VALUES (?, 'shop', 'resolved', ?, '{}')"
    if isinstance(target, Path):
        db = sqlite3.connect(target)
        db.execute(create)
        db.executemany(insert, rows)
        db.commit()
        db.close()
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(create)
        for row in rows:
            conn.execute(insert.replace("?", "%s"), row)


# -- intents ----------------------------------------------------------------------------


def test_an_intent_recorded_by_one_replica_is_read_by_another_and_done_once(
    target: Target,
) -> None:
    """What a comment asked of an app, recorded by the replica the webhook reached, is
    what the app's holder reads (its own connection) and marks done."""
    asker, holder = Journal(target), Journal(target)
    assert asker.add_intent("shop", "retry", "inc-1", {"pr": 7, "attempts": 1}, EPOCH)
    assert not asker.add_intent("shop", "retry", "inc-1", {"pr": 8, "attempts": 1}, EPOCH + 1)
    assert not holder.add_intent("shop", "retry", "inc-1", {"pr": 9}, EPOCH + 2), "one open"
    assert asker.add_intent("shop", "merge", "12", {"pr": 12}, EPOCH - 5)
    assert asker.add_intent("cart", "retry", "inc-1", {"pr": 3}, EPOCH), "another app's own"
    (merge, retry) = holder.intents("shop")  # oldest first, every kind in one read
    assert (merge.kind, merge.key, dict(merge.data), merge.queued) == (
        "merge",
        "12",
        {"pr": 12},
        EPOCH - 5,
    )
    assert (retry.kind, retry.key, dict(retry.data)) == ("retry", "inc-1", {"pr": 7, "attempts": 1})
    holder.finish_intent("shop", "retry", "inc-1", "attempt 2 started")
    holder.finish_intent("shop", "retry", "inc-1", "again")  # done once: nothing more
    assert [i.kind for i in asker.intents("shop")] == ["merge"]
    assert [i.app for i in asker.intents("cart")] == ["cart"], "the other app's untouched"
    assert asker.add_intent("shop", "retry", "inc-1", {"attempts": 2}, EPOCH + 9), "asked again"
    assert [dict(i.data) for i in holder.intents("shop") if i.kind == "retry"] == [{"attempts": 2}]
    assert _intent_results(target) == [("attempt 2 started", 1)], "the done row stays"


def test_two_replicas_recording_one_intent_at_once_record_it_once(target: Target) -> None:
    added = _at_once(target, lambda j: j.add_intent("shop", "retry", "inc-1", {}, EPOCH))
    assert sorted(added) == [False, False, False, True]
    assert len(Journal(target).intents("shop")) == 1


def _at_once(target: Target, write: Callable[[Journal], bool]) -> list[bool]:
    """``write`` by four replicas (a journal each, a thread each) at once: what each got."""
    journals = [Journal(target) for _ in range(4)]
    barrier, got = threading.Barrier(len(journals)), []

    def one(journal: Journal) -> None:
        barrier.wait()
        got.append(write(journal))

    threads = [threading.Thread(target=one, args=(j,)) for j in journals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return got


def _intent_results(target: Target) -> list[tuple[str, int]]:
    query = "SELECT result, done FROM intents WHERE done = 1"
    if isinstance(target, Path):
        with sqlite3.connect(target) as db:
            return [(str(r[0]), int(r[1])) for r in db.execute(query)]
    import psycopg

    with psycopg.connect(target) as conn:
        return [(r[0], int(r[1])) for r in conn.execute(query)]


# -- webhook deliveries ------------------------------------------------------------------


def test_a_delivery_is_first_seen_once_among_replicas_racing_for_it(target: Target) -> None:
    keys = ["id:d-1", "sha256:aa"]
    first = _at_once(target, lambda j: j.first_seen(keys, EPOCH, forget_before=0.0))
    assert sorted(first) == [False, False, False, True]


def test_a_delivery_seen_in_part_writes_nothing_and_old_keys_are_forgotten(
    target: Target,
) -> None:
    journal = Journal(target)
    assert journal.first_seen(["id:d-1", "sha256:aa"], EPOCH, forget_before=0.0)
    # a replay: a new id, the same body; the new id is not kept either
    assert not journal.first_seen(["id:d-2", "sha256:aa"], EPOCH + 1, forget_before=0.0)
    assert journal.first_seen(["id:d-2", "sha256:bb"], EPOCH + 2, forget_before=0.0)
    # once the window passed, the same body is new again (GitHub keeps 3 days of deliveries)
    assert journal.first_seen(["id:d-3", "sha256:aa"], EPOCH + 9, forget_before=EPOCH + 3)


# -- the writer lease -------------------------------------------------------------------


def test_lease_grant_renew_takeover_and_expiry_under_two_holders(target: Target) -> None:
    a, b = Journal(target), Journal(target)  # two replicas, two connections
    assert a.acquire("shop", "bot-a", now=EPOCH, ttl_s=60).acquired
    refused = b.acquire("shop", "bot-b", now=EPOCH + 30, ttl_s=60)
    assert not refused.acquired and refused.holder == "bot-a" and refused.expires == EPOCH + 60
    renewed = a.acquire("shop", "bot-a", now=EPOCH + 40, ttl_s=60)
    assert renewed.acquired and renewed.taken_over_from == "", "renewal by the holder"
    still = b.acquire("shop", "bot-b", now=EPOCH + 99, ttl_s=60)
    assert not still.acquired and still.expires == EPOCH + 100, "the renewal moved the expiry"
    taken = b.acquire("shop", "bot-b", now=EPOCH + 100.5, ttl_s=60)
    assert taken.acquired and taken.taken_over_from == "bot-a"
    assert not a.acquire("shop", "bot-a", now=EPOCH + 101, ttl_s=60).acquired
    assert a.acquire("cart", "bot-a", now=EPOCH + 101, ttl_s=60).acquired, "one lease per app"
    a.release("shop", "bot-a")  # not the holder: nothing released
    assert not a.acquire("shop", "bot-c", now=EPOCH + 102, ttl_s=60).acquired
    b.release("shop", "bot-b")
    assert a.acquire("shop", "bot-c", now=EPOCH + 102, ttl_s=60).acquired


def test_a_dead_holder_is_replaced_at_once_a_live_one_is_not(target: Target) -> None:
    journal = Journal(target)
    assert journal.acquire("shop", "gone", now=EPOCH, ttl_s=3600).acquired
    live = journal.acquire("shop", "bot-b", now=EPOCH + 1, ttl_s=60, dead=lambda h: False)
    assert not live.acquired
    taken = journal.acquire("shop", "bot-b", now=EPOCH + 1, ttl_s=60, dead=lambda h: h == "gone")
    assert taken.acquired and taken.taken_over_from == "gone"


def test_two_connections_racing_for_one_lease_exactly_one_wins(target: Target) -> None:
    """Many rounds of two replicas asking at the same instant for a free lease and for an
    expired one: never both, never neither."""
    journals = [Journal(target), Journal(target)]
    for n in range(12):
        if n % 2:  # an expired holder to take over from
            journals[0].acquire(f"app-{n}", "old", now=EPOCH, ttl_s=1)
        grants = _race(journals, f"app-{n}")
        assert sorted(grants.values()) == [False, True], f"round {n}: {grants}"


def _race(journals: list[Journal], app: str) -> dict[str, bool]:
    """Each journal asks for ``app``'s lease at once, from its own thread: who got it."""
    start = threading.Barrier(len(journals))
    grants: dict[str, bool] = {}

    def ask(journal: Journal, holder: str) -> None:
        start.wait()
        grants[holder] = journal.acquire(app, holder, now=EPOCH + 10, ttl_s=60).acquired

    threads = [threading.Thread(target=ask, args=(j, f"bot-{i}")) for i, j in enumerate(journals)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return grants


def test_a_lease_read_by_one_replica_is_not_taken_by_another_before_it_writes(
    target: Target,
) -> None:
    """Replica A has read the lease (its holder dead) and not written it yet; replica B asks
    meanwhile. B must wait for A's write and then see A's lease: were the row not locked
    between A's read and write, B would take the lease too and both would act."""
    a, b = Journal(target), Journal(target)
    assert a.acquire("shop", "gone", now=EPOCH, ttl_s=3600).acquired
    b_done = threading.Event()
    b_grant: list[bool] = []

    def b_asks() -> None:
        b_grant.append(b.acquire("shop", "bot-b", now=EPOCH + 1, ttl_s=60, dead=dead).acquired)
        b_done.set()

    def a_judges(holder: str) -> bool:
        # A is between its read and its write: start B, give it time to go through if it can
        threading.Thread(target=b_asks, daemon=True).start()
        assert not b_done.wait(timeout=1.0), "B was granted while A held the row"
        return holder == "gone"

    dead = lambda holder: holder == "gone"  # noqa: E731
    a_grant = a.acquire("shop", "bot-a", now=EPOCH + 1, ttl_s=60, dead=a_judges)
    assert a_grant.acquired and a_grant.taken_over_from == "gone"
    assert b_done.wait(timeout=60)
    assert b_grant == [False]


# -- crash safety -----------------------------------------------------------------------

KILLED_MID_WRITE = """
import os, signal, sys
from gitmedic.reconciler.transaction import Journal
target = sys.argv[1]
journal = Journal(target)
with journal._db() as db:
    db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?)", ("inc-1/1", 2, "pr-opened", 1.0, "{}"))
    db.execute("INSERT INTO locks VALUES (?, ?, ?, ?)", ("cart", "killed", 0.0, 9e12))
    os.kill(os.getpid(), signal.SIGKILL)  # inside the transaction: nothing of it may stay
"""


def test_a_process_killed_inside_a_write_leaves_nothing_of_it(target: Target) -> None:
    journal = Journal(target)
    journal.create(plan(), EPOCH)
    journal.append("inc-1/1", Record(1, Phase.PR_OPENED, EPOCH, {"pr": 1}))
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    after = Journal(target)
    assert [r.seq for r in after.load("inc-1/1").records] == [1]
    after.append("inc-1/1", Record(2, Phase.GATED, EPOCH + 1, {"gate": json.dumps("ok")}))
    assert after.acquire("cart", "bot-a", now=EPOCH, ttl_s=60).acquired, "no lease was left"


@pytest.mark.integration
def test_a_postgresql_connection_lost_fails_that_operation_and_the_next_reconnects(
    postgres_url: str,
) -> None:
    import psycopg

    from gitmedic.reconciler.transaction.journal_store import JournalUnavailable

    journal = Journal(postgres_url)
    journal.create(plan(), EPOCH)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        # the server ends every other session on the database (a failover, a restart)
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(JournalUnavailable) as lost:
        journal.append("inc-1/1", Record(1, Phase.PR_OPENED, EPOCH, {"pr": 1}))
    password = postgres_url.split(":")[2].split("@")[0]
    assert password not in str(lost.value) and "****" in str(lost.value)
    journal.append("inc-1/1", Record(1, Phase.PR_OPENED, EPOCH, {"pr": 1}))
    assert journal.load("inc-1/1").pr == 1
