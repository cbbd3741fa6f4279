"""The small SQLite files serve keeps (deliveries seen, an earlier serve's pending work).

WAL so the webhook worker and the monitor thread read while the other writes;
one short connection per operation (SQLite connections are not shared across
threads), committed on success and rolled back on error by ``with db``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def create(path: Path, schema: str) -> None:
    """The file (and its folder) with ``schema`` applied: idempotent, ``IF NOT EXISTS``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            yield db
    finally:
        db.close()
