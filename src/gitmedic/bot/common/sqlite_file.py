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
from typing import Any


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


def table_rows(path: Path, table: str, query: str, args: tuple[object, ...] = ()) -> list[Any]:
    """``query``'s rows from the file at ``path`` when it holds ``table``, else none: what a
    file from before may still hold, read without creating the file or the table."""
    if not path.exists():
        return []
    with connect(path) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall():
            return []
        return db.execute(query, args).fetchall()
