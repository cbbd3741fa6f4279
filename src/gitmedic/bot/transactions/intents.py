"""Intents: what people asked of an app that the next tick carries out, journaled.

``serve`` answers a comment or a webhook at once and acts on nothing: a command
records an intent and the loop's next tick, holding the app's writer lease, acts
on it (:meth:`gitmedic.bot.controller.loop.Loop.step`). Intents that are not yet a
transaction's plan live here: an incident to try again
(:mod:`~gitmedic.bot.transactions.retry`), a merge to tell about
(:mod:`~gitmedic.bot.transactions.fix`). A revert asked for and a merge to watch
are recorded as their transactions' plans instead.

They are rows of the journal itself (:meth:`Journal.add_intent`), keyed by app, in
SQLite or in the PostgreSQL the replicas share: a comment that reaches a replica not
holding the app is recorded there and carried out by the replica that holds it, and
a restarted ``serve`` finds what the crashed one left. A crash before an item's
``done`` mark repeats the item, never drops it; the callers make the repetition
harmless.

Before intents were journal rows they were a ``pending`` table (no app column) in
the SQLite file beside the journal: each serve of one app kept its own. Its open
rows are moved here, to the app whose state it is, when the app's intents are
first opened; the old rows stay, marked done, as the record of the move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.common import sqlite_file
from gitmedic.reconciler.transaction import Journal

_MOVED = "moved to the journal's intents"


@dataclass(frozen=True)
class Item:
    kind: str
    key: str
    data: Mapping[str, Any]


class Intents:
    """The open intents of one app in its journal."""

    def __init__(self, journal: Journal, app: str) -> None:
        self.journal, self.app = journal, app
        _adopt_pending(journal, app)

    def add(self, kind: str, key: str, data: Mapping[str, Any], now: float) -> bool:
        """Queue an item; False when the same (kind, key) is already queued."""
        return self.journal.add_intent(self.app, kind, key, data, now)

    def open(self) -> dict[str, list[Item]]:
        """Every kind's items not done yet, oldest first: one read of the journal."""
        grouped: dict[str, list[Item]] = {}
        for row in self.journal.intents(self.app):
            grouped.setdefault(row.kind, []).append(Item(row.kind, row.key, row.data))
        return grouped

    def items(self, kind: str) -> list[Item]:
        """Items of ``kind`` not done yet, oldest first (what a restarted monitor resumes)."""
        return self.open().get(kind, [])

    def finish(self, kind: str, key: str, result: str = "") -> None:
        """Mark the queued item carried out; the row stays as the record of it."""
        self.journal.finish_intent(self.app, kind, key, result)


def _adopt_pending(journal: Journal, app: str) -> None:
    """The open rows of the ``pending`` table an earlier serve kept beside the journal,
    moved into the journal as ``app``'s (each added before its old row is marked done:
    a crash between finds it open in both, and adding it again is idempotent)."""
    path = journal.local
    if path is None:  # a PostgreSQL journal opened with no local file: nothing kept
        return
    rows = sqlite_file.table_rows(
        path,
        "pending",
        "SELECT id, kind, key, data, queued FROM pending WHERE done = 0 ORDER BY queued, id",
    )
    for ident, kind, key, data, queued in rows:
        journal.add_intent(app, kind, key, json.loads(data), queued)
        with sqlite_file.connect(path) as db:
            db.execute("UPDATE pending SET done = 1, result = ? WHERE id = ?", (_MOVED, ident))
