"""The writer lease: one holder id per process; a dead holder on this host is replaced at once,
a live one (or one elsewhere) only when its lease expires."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gitmedic.reconciler.transaction import Journal, LockGrant
from gitmedic.reconciler.transaction.lease import Lease, dead_on_this_host, this_process


def test_every_process_gets_its_own_holder_id() -> None:
    one, two = this_process(), this_process()
    assert one != two and one.split(":")[1] == two.split(":")[1] == str(os.getpid())


def test_a_holder_whose_process_is_gone_is_dead_and_its_lease_taken_at_once(
    tmp_path: Path,
) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    host = this_process().split(":")[0]
    holder = f"{host}:{gone}:deadbeef"
    assert dead_on_this_host(holder)
    journal = Journal(tmp_path / "j.sqlite")
    assert Lease(journal, "shop", holder, ttl_s=3600, clock=lambda: 100.0).hold().acquired
    taken = Lease(journal, "shop", this_process(), clock=lambda: 101.0).hold()
    assert taken.acquired and taken.taken_over_from == holder


def test_a_live_holder_or_one_on_another_host_waits_for_its_expiry(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    for holder in (this_process(), "elsewhere:1:cafebabe"):
        journal.release("shop", holder)
        assert not dead_on_this_host(holder)
        assert Lease(journal, "shop", holder, ttl_s=60, clock=lambda: 0.0).hold().acquired
        refused = Lease(journal, "shop", "other:2:0", clock=lambda: 30.0).hold()
        assert not refused.acquired and refused.holder == holder and refused.expires == 60.0
        assert Lease(journal, "shop", "other:2:0", clock=lambda: 61.0).hold().acquired
        journal.release("shop", "other:2:0")


class CountingJournal(Journal):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writes = 0

    def acquire(self, *args: object, **kwargs: object) -> LockGrant:
        self.writes += 1
        return super().acquire(*args, **kwargs)  # type: ignore[arg-type]


def test_a_held_lease_is_written_again_once_a_third_of_its_ttl_passed(tmp_path: Path) -> None:
    journal, now = CountingJournal(tmp_path / "j.sqlite"), [100.0]
    lease = Lease(journal, "shop", "me:1:a", ttl_s=60, clock=lambda: now[0])
    for at in (100.0, 101.0, 119.9):
        now[0] = at
        grant = lease.hold()
        assert (grant.acquired, grant.holder, grant.taken_over_from) == (True, "me:1:a", "")
    assert journal.writes == 1, "a step within a third of the TTL writes no row"
    now[0] = 120.0
    assert lease.hold().acquired and journal.writes == 2
    refused = Lease(journal, "shop", "other:2:b", clock=lambda: 179.0).hold()
    assert not refused.acquired and refused.expires == 180.0, "expiry moved by the renewal"  # 3rd
    lease.release()
    assert lease.hold().acquired and journal.writes == 4, "a released lease is taken again"


def test_a_refused_lease_is_asked_for_at_every_step(tmp_path: Path) -> None:
    journal = CountingJournal(tmp_path / "j.sqlite")
    assert Lease(journal, "shop", "me:1:a", ttl_s=60, clock=lambda: 0.0).hold().acquired
    other = Lease(journal, "shop", "other:2:b", ttl_s=60, clock=lambda: 1.0)
    assert not other.hold().acquired and not other.hold().acquired
    assert journal.writes == 3


def test_a_row_taken_from_a_fresh_holder_is_seen_at_its_next_step(tmp_path: Path) -> None:
    journal = CountingJournal(tmp_path / "j.sqlite")
    mine = Lease(journal, "shop", "me:1:a", ttl_s=60, clock=lambda: 0.0)
    assert mine.hold().acquired
    fenced = Lease(journal, "shop", "shard:2:b", ttl_s=60, clock=lambda: 1.0, dead=lambda h: True)
    assert fenced.hold().acquired  # as a shard's row is taken, before it expires
    refused = mine.hold()
    assert not refused.acquired and refused.holder == "shard:2:b"
