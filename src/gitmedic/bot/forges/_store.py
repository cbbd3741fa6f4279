"""LocalForge's metadata: one SQLite file (WAL) under ``.git/gitmedic/forge.sqlite``.

Every verb runs in one ``BEGIN IMMEDIATE`` transaction on its own connection, so
verbs are serialised across threads and processes: two bots calling ``ensure_pr``
for one branch at once make one PR (the ``UNIQUE`` branch column backs this up).
Git refs are moved inside that transaction, so a ref and its row change together
as far as other callers can see.

PR and issue numbers come from one ``numbers`` sequence, as on GitHub.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from gitmedic.reconciler.forge import CommitStatus, Permission, ServerError, StatusState

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS numbers (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('pr', 'issue')));
CREATE TABLE IF NOT EXISTS prs (
    number INTEGER PRIMARY KEY REFERENCES numbers (number),
    branch TEXT NOT NULL UNIQUE, base TEXT NOT NULL, title TEXT NOT NULL,
    body TEXT NOT NULL, state TEXT NOT NULL, head_sha TEXT NOT NULL,
    merge_sha TEXT, author TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS issues (
    number INTEGER PRIMARY KEY REFERENCES numbers (number),
    title TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, author TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    number INTEGER NOT NULL, label TEXT NOT NULL, PRIMARY KEY (number, label));
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT, number INTEGER NOT NULL,
    author TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS statuses (
    sha TEXT NOT NULL, context TEXT NOT NULL, state TEXT NOT NULL,
    description TEXT NOT NULL, target_url TEXT, PRIMARY KEY (sha, context));
CREATE TABLE IF NOT EXISTS permissions (user TEXT PRIMARY KEY, permission TEXT NOT NULL);
"""

PR_COLUMNS = "number, branch, base, title, body, state, head_sha, merge_sha, author"
BUSY_TIMEOUT_S = 30.0
SCHEMA_VERSION = "1"


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path

    def exists(self) -> bool:
        return self.path.is_file()

    def initialise(self, owner: str, base: str) -> None:
        """Create the file and tables (idempotent); the owner is admin from the start."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            with conn:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('base', ?)", (base,))
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('owner', ?)", (owner,))
                conn.execute("INSERT OR IGNORE INTO permissions VALUES (?, 'admin')", (owner,))

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One serialised transaction: committed when the block ends, else rolled back."""
        with closing(
            sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        ) as conn:
            conn.row_factory = sqlite3.Row
            try:
                # WAL + NORMAL: a killed process loses nothing committed; only a
                # power cut may lose the last transactions (the file stays sound).
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise ServerError(f"local forge database {self.path}: {exc}") from exc
                raise


def meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row["value"])


def new_number(conn: sqlite3.Connection, kind: str) -> int:
    cursor = conn.execute("INSERT INTO numbers (kind) VALUES (?)", (kind,))
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def kind_of(conn: sqlite3.Connection, number: int) -> str | None:
    row = conn.execute("SELECT kind FROM numbers WHERE number = ?", (number,)).fetchone()
    return None if row is None else str(row["kind"])


def labels_of(conn: sqlite3.Connection, number: int) -> tuple[str, ...]:
    rows = conn.execute("SELECT label FROM labels WHERE number = ? ORDER BY label", (number,))
    return tuple(str(r["label"]) for r in rows)


def add_labels(conn: sqlite3.Connection, number: int, labels: Iterable[str]) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO labels VALUES (?, ?)", [(number, label) for label in labels]
    )


def remove_labels(conn: sqlite3.Connection, number: int, labels: Iterable[str]) -> None:
    conn.executemany(
        "DELETE FROM labels WHERE number = ? AND label = ?", [(number, lb) for lb in labels]
    )


def upsert_status(conn: sqlite3.Connection, status: CommitStatus) -> None:
    conn.execute(
        "INSERT INTO statuses VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha, context) DO UPDATE"
        " SET state = excluded.state, description = excluded.description,"
        " target_url = excluded.target_url",
        (status.sha, status.context, status.state.value, status.description, status.target_url),
    )


def statuses_of(conn: sqlite3.Connection, sha: str) -> tuple[CommitStatus, ...]:
    rows = conn.execute("SELECT * FROM statuses WHERE sha = ? ORDER BY context", (sha,))
    return tuple(
        CommitStatus(
            sha=str(r["sha"]),
            context=str(r["context"]),
            state=StatusState(r["state"]),
            description=str(r["description"]),
            target_url=r["target_url"],
        )
        for r in rows
    )


def permission_of(conn: sqlite3.Connection, user: str) -> Permission:
    row = conn.execute("SELECT permission FROM permissions WHERE user = ?", (user,)).fetchone()
    return Permission.NONE if row is None else Permission.parse(str(row["permission"]))


def set_permission(conn: sqlite3.Connection, user: str, permission: Permission) -> None:
    conn.execute(
        "INSERT INTO permissions VALUES (?, ?) ON CONFLICT (user) DO UPDATE"
        " SET permission = excluded.permission",
        (user, permission.label),
    )
