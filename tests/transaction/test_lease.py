"""The writer lease: one holder id per process; a dead holder on this host is replaced at once,
a live one (or one elsewhere) only when its lease expires."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gitmedic.reconciler.transaction import Journal
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
