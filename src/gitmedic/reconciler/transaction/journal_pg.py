"""The journal in PostgreSQL, for more than one replica (``postgresql://`` URLs).

psycopg 3 (the ``[postgres]`` extra) is imported here only, when a journal URL
names PostgreSQL: the embedded SQLite default costs nothing at start-up. One
connection per journal, used by one thread at a time (a lock), in autocommit mode
with an explicit transaction per journal operation; a connection that broke is
replaced at the next operation, and the operation that saw it break fails (a
journal error is never "nothing recorded").

Read committed isolation is enough for what the journal writes: appends and
incident rows are keyed, and the lease (:meth:`Journal.acquire`) locks its row
with ``SELECT ... FOR UPDATE`` and writes it with an ``INSERT ... ON CONFLICT DO
UPDATE`` whose condition is the holder it read, so of two replicas racing for a
free or expired lease exactly one gets it. The URL's password never reaches a
message: :func:`redact` takes it out of the URL and of the driver's errors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from gitmedic.reconciler.redact import MASK
from gitmedic.reconciler.transaction.journal_store import (
    DuplicateKey,
    JournalUnavailable,
    Row,
    Tx,
)

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql", "postgres")

# Times are epoch seconds: PostgreSQL's REAL is 4 bytes (a 128 s step at 2026's
# epoch), so DOUBLE PRECISION.
SCHEMA = """
CREATE TABLE IF NOT EXISTS transactions (
    txn_id TEXT PRIMARY KEY, app TEXT NOT NULL, incident TEXT NOT NULL,
    attempt BIGINT NOT NULL, plan TEXT NOT NULL, created DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    txn_id TEXT NOT NULL REFERENCES transactions(txn_id), seq BIGINT NOT NULL,
    phase TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (txn_id, seq)
);
CREATE TABLE IF NOT EXISTS locks (
    app TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired DOUBLE PRECISION NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS incidents (
    id TEXT PRIMARY KEY, app TEXT NOT NULL, status TEXT NOT NULL,
    opened DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, seq BIGINT NOT NULL DEFAULT 0
);
ALTER TABLE incidents ADD COLUMN IF NOT EXISTS seq BIGINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS intents (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, app TEXT NOT NULL, kind TEXT NOT NULL,
    key TEXT NOT NULL, data TEXT NOT NULL, queued DOUBLE PRECISION NOT NULL,
    done BIGINT NOT NULL DEFAULT 0, result TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS intents_open ON intents (app, kind, key) WHERE done = 0;
CREATE TABLE IF NOT EXISTS healthy_images (
    app TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, workload TEXT NOT NULL,
    container TEXT NOT NULL, image TEXT NOT NULL, image_id TEXT NOT NULL,
    seen DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (app, kind, namespace, workload, container, image_id)
);
CREATE TABLE IF NOT EXISTS deliveries_seen (
    key TEXT PRIMARY KEY, received DOUBLE PRECISION NOT NULL
);
"""
# (A journal from before incidents had their ``seq``: its rows get 0, and are listed first,
# in the order they had, by ``opened``.)
# Replicas starting together would race CREATE TABLE IF NOT EXISTS (it is not safe
# against itself): the schema is applied under this transaction-scoped lock.
_SCHEMA_LOCK = 0x676D6A6C  # "gmjl"


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.split("://", 1)[0] in SCHEMES and "://" in target


def password_of(url: str) -> str:
    try:
        return unquote(urlsplit(url).password or "")
    except ValueError:
        return ""


def redact(url: str, text: str | None = None) -> str:
    """``url`` (or ``text``, which may quote it) with the URL's password replaced by ****
    (the redaction registry's mask, so a message redacted twice reads the same)."""
    secret = password_of(url)
    if text is None:
        try:
            parts = urlsplit(url)
        except ValueError:
            return "<a journal URL that does not parse>"
        if parts.password is not None:
            host = parts.netloc.rsplit("@", 1)[1]
            user = parts.username or ""
            parts = parts._replace(netloc=f"{user}:{MASK}@{host}")
        text = urlunsplit(parts)
    for form in {secret, _raw_password(url)} - {""}:
        text = text.replace(form, MASK)
    return text


def _raw_password(url: str) -> str:
    try:
        return urlsplit(url).password or ""
    except ValueError:
        return ""


class _PgTx:
    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self.cursor = cursor

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        import psycopg

        try:
            self.cursor.execute(sql.replace("?", "%s"), tuple(args))
        except psycopg.errors.UniqueViolation as exc:
            raise DuplicateKey(str(exc)) from None
        return self.cursor.fetchall() if self.cursor.description else []


class PostgresStore:
    def __init__(self, url: str, *, connect_timeout_s: int = 10) -> None:
        import psycopg  # the [postgres] extra; ModuleNotFoundError names it at the CLI

        self._psycopg = psycopg
        self.url = url
        self.where = redact(url)
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        with self.transaction() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            for statement in filter(str.strip, SCHEMA.split(";")):
                tx.execute(statement)

    def _connection(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        try:
            conn = self._psycopg.connect(
                self.url, autocommit=True, connect_timeout=self.connect_timeout_s
            )
        except self._psycopg.Error as exc:
            raise JournalUnavailable(
                f"cannot connect to the journal at {self.where}: {redact(self.url, str(exc))}"
            ) from None
        self._conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cursor:
                    yield _PgTx(cursor)
            except self._psycopg.OperationalError as exc:
                # the connection is gone mid-operation: this one fails, the next reconnects
                conn.close()
                raise JournalUnavailable(
                    f"the journal at {self.where} failed: {redact(self.url, str(exc))}"
                ) from None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __del__(self) -> None:
        # the store owns its connection: a journal dropped without close() closes it
        # (psycopg warns about a connection collected open)
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
