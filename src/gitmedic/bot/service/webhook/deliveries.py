"""Webhook deliveries, persisted in SQLite: de-duplication and a queue that survives restarts.

A delivery is stored (id, event, raw body) *before* the 202 is sent, in one
``INSERT OR IGNORE``: a second delivery with the same ``X-GitHub-Delivery`` id,
now or after a restart, finds the row and is refused as a duplicate. The worker
marks a delivery done (dropping its body) when it has been handled; deliveries
still queued when the process stopped are handled again at start-up, so an
accepted delivery is never lost, and handlers are idempotent so handling one
twice after a crash is harmless.

The id alone does not make a delivery new: it is a header outside the signature,
so a signed body captured once could be replayed under fresh ids for ever. The
SHA-256 of each accepted body is kept for :data:`REPLAY_WINDOW_S`; the same body
again within it is a duplicate whatever its id. GitHub's own redeliveries keep
their id, and two genuine events never share a body (each carries its own ids
and timestamps), so nothing genuine is refused.

Replicas behind one Service each keep this file, and a delivery (a redelivery, or a
captured body replayed) may reach any of them. With a journal they share (PostgreSQL),
``seen`` records the id and the digest there too, in the same acceptance: a delivery
another replica accepted is a duplicate here, so a command is carried out once and a
replay is refused by every replica, not once per replica. A journal that cannot be
reached accepts nothing (the sender is told to try again), never everything.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.common import sqlite_file

_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY, event TEXT NOT NULL, received REAL NOT NULL,
    body BLOB, status TEXT NOT NULL, result TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS digests (digest TEXT PRIMARY KEY, received REAL NOT NULL);
"""
REPLAY_WINDOW_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Delivery:
    id: str
    event: str
    body: bytes


# (keys, now) -> whether no other replica saw any of them (and now they are recorded)
SeenElsewhere = Callable[[Sequence[str], float], bool]


class _Duplicate(Exception):
    """Another replica accepted it: the local acceptance is rolled back."""


class DeliveryStore:
    def __init__(self, path: Path, seen: SeenElsewhere | None = None) -> None:
        self.path, self.seen = path, seen
        sqlite_file.create(path, _SCHEMA)

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite_file.connect(self.path)

    def accept(self, delivery: Delivery, now: float) -> bool:
        """Store a new delivery as queued; False when its id, or its body lately, was seen
        (here, or by another replica of the shared journal)."""
        digest = hashlib.sha256(delivery.body).hexdigest()
        try:
            with self._db() as db:
                db.execute("DELETE FROM digests WHERE received < ?", (now - REPLAY_WINDOW_S,))
                if db.execute("SELECT 1 FROM digests WHERE digest = ?", (digest,)).fetchone():
                    return False
                cursor = db.execute(
                    "INSERT OR IGNORE INTO deliveries (id, event, received, body, status)"
                    " VALUES (?, ?, ?, ?, 'queued')",
                    (delivery.id, delivery.event, now, delivery.body),
                )
                if cursor.rowcount != 1:
                    return False
                db.execute("INSERT INTO digests (digest, received) VALUES (?, ?)", (digest, now))
                # last, inside the local write: refused there, nothing stays here either
                if self.seen is not None and not self.seen(
                    (f"id:{delivery.id}", f"sha256:{digest}"), now
                ):
                    raise _Duplicate
                return True
        except _Duplicate:
            return False

    def get(self, delivery_id: str) -> Delivery | None:
        with self._db() as db:
            row = db.execute(
                "SELECT id, event, body FROM deliveries WHERE id = ? AND status = 'queued'",
                (delivery_id,),
            ).fetchone()
        return None if row is None else Delivery(row[0], row[1], bytes(row[2]))

    def queued(self) -> list[str]:
        """Ids still to handle, oldest first (what a restarted worker resumes)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT id FROM deliveries WHERE status = 'queued' ORDER BY received, rowid"
            ).fetchall()
        return [r[0] for r in rows]

    def finish(self, delivery_id: str, status: str, result: str) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE deliveries SET status = ?, result = ?, body = NULL WHERE id = ?",
                (status, result, delivery_id),
            )

    def result(self, delivery_id: str) -> tuple[str, str] | None:
        with self._db() as db:
            row = db.execute(
                "SELECT status, result FROM deliveries WHERE id = ?", (delivery_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def ping(self) -> bool:
        try:
            with self._db() as db:
                db.execute("SELECT 1 FROM deliveries LIMIT 1").fetchall()
        except sqlite3.Error:
            return False
        return True
