"""Intents: what people asked for that the next tick carries out, journaled.

``serve`` answers a comment or a webhook at once and acts on nothing: a command
records an intent and the loop's next tick, holding the app's writer lease, acts
on it (:meth:`gitmedic.bot.controller.loop.Loop.step`). Intents that are not yet a
transaction's plan live here: an incident to try again
(:mod:`~gitmedic.bot.transactions.retry`), a merge to tell about
(:mod:`~gitmedic.bot.transactions.fix`). A revert asked for and a merge to watch
are recorded as their transactions' plans instead, in the journal itself. The
table is ``pending`` in the journal's own SQLite database (WAL; beside a
PostgreSQL journal, the host's local file), so a restarted ``serve`` finds them
where the crashed one left them, just as it finds its transactions.

Rows are append-only but for one ``done`` marker, set only after the item was
carried out (a retry run, a merge told): a crash before that repeats the item,
never drops it, and the callers make the repetition harmless. A partial unique
index on (kind, key) among rows not done makes adding idempotent: the same
incident queued twice is one item; once that item is done, the same key may be
queued again (a second retry after the first failed).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.bot.common import sqlite_file

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
    queued REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0, result TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS pending_open ON pending (kind, key) WHERE done = 0;
"""


@dataclass(frozen=True)
class Item:
    kind: str
    key: str
    data: Mapping[str, Any]


class Intents:
    """The ``pending`` table of one SQLite file (the journal's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite_file.create(path, _SCHEMA)

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite_file.connect(self.path)

    def add(self, kind: str, key: str, data: Mapping[str, Any], now: float) -> bool:
        """Queue an item; False when the same (kind, key) is already queued."""
        with self._db() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO pending (kind, key, data, queued) VALUES (?, ?, ?, ?)",
                (kind, key, json.dumps(dict(data), sort_keys=True), now),
            )
            return cursor.rowcount == 1

    def items(self, kind: str) -> list[Item]:
        """Items of ``kind`` not done yet, oldest first (what a restarted monitor resumes)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT key, data FROM pending WHERE kind = ? AND done = 0 ORDER BY queued, id",
                (kind,),
            ).fetchall()
        return [Item(kind, key, json.loads(data)) for key, data in rows]

    def finish(self, kind: str, key: str, result: str = "") -> None:
        """Mark the queued item carried out; the row stays as the record of it."""
        with self._db() as db:
            db.execute(
                "UPDATE pending SET done = 1, result = ? WHERE kind = ? AND key = ? AND done = 0",
                (result, kind, key),
            )
