"""Where the journal's rows live: the embedded SQLite file, or (``journal_pg``) PostgreSQL.

The journal speaks one SQL to both: ``?`` placeholders, ``INSERT ... ON CONFLICT``
(SQLite has it since 3.24) and ``RETURNING`` (3.35). A store runs each
:meth:`Store.transaction` as one database transaction, committed when the block
ends and rolled back when it raises, and turns the database's unique-key violation
into :class:`DuplicateKey` so the journal never names a driver's exceptions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

Row = tuple[Any, ...]

# SQLite's columns; REAL is 8 bytes there (PostgreSQL's schema says so in its own words).
SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS transactions (
    txn_id TEXT PRIMARY KEY, app TEXT NOT NULL, incident TEXT NOT NULL,
    attempt INTEGER NOT NULL, plan TEXT NOT NULL, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    txn_id TEXT NOT NULL REFERENCES transactions(txn_id), seq INTEGER NOT NULL,
    phase TEXT NOT NULL, at REAL NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (txn_id, seq)
);
CREATE TABLE IF NOT EXISTS locks (
    app TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired REAL NOT NULL, expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS incidents (
    id TEXT PRIMARY KEY, app TEXT NOT NULL, status TEXT NOT NULL, opened REAL NOT NULL,
    data TEXT NOT NULL, seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS intents (
    id INTEGER PRIMARY KEY, app TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
    data TEXT NOT NULL, queued REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0,
    result TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS intents_open ON intents (app, kind, key) WHERE done = 0;
CREATE TABLE IF NOT EXISTS healthy_images (
    app TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, workload TEXT NOT NULL,
    container TEXT NOT NULL, image TEXT NOT NULL, image_id TEXT NOT NULL, seen REAL NOT NULL,
    PRIMARY KEY (app, kind, namespace, workload, container, image_id)
);
CREATE TABLE IF NOT EXISTS deliveries_seen (key TEXT PRIMARY KEY, received REAL NOT NULL);
"""


class DuplicateKey(Exception):
    """The row's key is taken (a unique-key violation, whichever database said it)."""


class JournalUnavailable(Exception):
    """The journal's database cannot be reached or opened (the message names it, redacted)."""


class Tx(Protocol):
    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        """Run one statement; the rows it returns (none for most writes)."""
        ...


class Store(Protocol):
    where: str  # for messages: the file, or the URL without its password

    def transaction(self) -> AbstractContextManager[Tx]: ...

    def close(self) -> None: ...


class _SqliteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        try:
            return self.db.execute(sql, tuple(args)).fetchall()
        except sqlite3.IntegrityError as exc:
            raise DuplicateKey(str(exc)) from None


def _incident_seq(db: sqlite3.Connection) -> None:
    """A journal written before incidents had their ``seq`` (the journal's order) gets the
    column, its rows in the order they were inserted (the rowid: an upsert updates a row
    in place). Checked and added in one write transaction: two processes may start at once."""
    db.isolation_level = None
    db.execute("BEGIN IMMEDIATE")
    try:
        if "seq" not in {row[1] for row in db.execute("PRAGMA table_info(incidents)")}:
            db.execute("ALTER TABLE incidents ADD COLUMN seq INTEGER NOT NULL DEFAULT 0")
            db.execute("UPDATE incidents SET seq = rowid")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class SqliteStore:
    """One file in WAL mode; a short connection per transaction (they are not shared
    across threads), ``BEGIN IMMEDIATE`` so two writers queue instead of deadlocking."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SQLITE_SCHEMA)
            _incident_seq(db)
        finally:
            db.close()

    def close(self) -> None:
        """Nothing held between transactions."""

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()
