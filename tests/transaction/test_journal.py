"""The journal survives restarts, refuses forked history, and locks one writer per app."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.transaction import (
    Journal,
)


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
