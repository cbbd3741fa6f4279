"""The journal: transactions, incidents and the per-application writer lease, in SQLite (WAL).

Records are append-only and keyed by (transaction, sequence number): a second
writer appending the same step loses with :class:`JournalConflict` instead of
forking history. Incidents are rows keyed by their stable id (derived from the
fingerprints that fired, :mod:`gitmedic.bot.loop.incidents`), so a restarted
process finds the incident it was answering, its attempts (the transactions
naming it) and its memory PR. Locks carry an expiry so a crashed holder's lock
can be taken over (at once when the holder is known dead, see
:mod:`~gitmedic.reconciler.transaction.lease`), and the takeover names the
previous holder for the log.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gitmedic.reconciler.transaction.model import Phase, Plan, Record, TxnState

_SCHEMA = """
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
    data TEXT NOT NULL
);
"""


class JournalConflict(Exception):
    """Another writer already appended this step."""


class UnknownTransaction(KeyError):
    def __str__(self) -> str:
        return f"no transaction {self.args[0]!r} in the journal"


@dataclass(frozen=True)
class LockGrant:
    acquired: bool
    holder: str  # who holds it now
    taken_over_from: str = ""  # the expired holder we replaced, for the log
    expires: float = 0.0  # when a refused grant's holder's lease runs out


@dataclass(frozen=True)
class IncidentRow:
    """An incident as the journal keeps it: enough to resume answering it after a restart."""

    id: str
    app: str
    status: str  # open | resolved | escalated | gone
    opened: float
    fingerprints: tuple[str, ...] = ()  # every finding it held, for matching it again
    data: Mapping[str, Any] = field(default_factory=dict)  # findings, escalation, memory

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    def with_data(self, **data: Any) -> IncidentRow:
        return replace(self, data={**self.data, **data})


class Journal:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
        finally:
            db.close()

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    # -- transactions ------------------------------------------------------------------

    def create(self, plan: Plan, now: float) -> TxnState:
        """Record a new transaction; creating one that exists returns it unchanged."""
        data = json.dumps(plan.to_json())
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO transactions VALUES (?, ?, ?, ?, ?, ?)",
                (plan.txn_id, plan.app, plan.incident, plan.attempt, data, now),
            )
        return self.load(plan.txn_id)

    def load(self, txn_id: str) -> TxnState:
        with self._db() as db:
            row = db.execute("SELECT plan FROM transactions WHERE txn_id = ?", (txn_id,)).fetchone()
            if row is None:
                raise UnknownTransaction(txn_id)
            rows = db.execute(
                "SELECT seq, phase, at, data FROM records WHERE txn_id = ? ORDER BY seq", (txn_id,)
            ).fetchall()
        plan = Plan.from_json(json.loads(row[0]))
        records = [Record(seq, Phase(phase), at, json.loads(data)) for seq, phase, at, data in rows]
        return TxnState.fold(plan, records)

    def append(self, txn_id: str, record: Record) -> None:
        data = json.dumps(dict(record.data), sort_keys=True)
        try:
            with self._db() as db:
                db.execute(
                    "INSERT INTO records VALUES (?, ?, ?, ?, ?)",
                    (txn_id, record.seq, record.phase.value, record.at, data),
                )
        except sqlite3.IntegrityError:
            raise JournalConflict(f"step {record.seq} of {txn_id} was already written") from None

    def transactions(
        self, *, app: str | None = None, incident: str | None = None
    ) -> list[TxnState]:
        query = "SELECT txn_id FROM transactions WHERE 1=1"
        args: list[str] = []
        if app is not None:
            query, args = query + " AND app = ?", [*args, app]
        if incident is not None:
            query, args = query + " AND incident = ?", [*args, incident]
        with self._db() as db:
            ids = [r[0] for r in db.execute(query + " ORDER BY created, attempt", args)]
        return [self.load(i) for i in ids]

    # -- locks -------------------------------------------------------------------------

    def acquire(
        self,
        app: str,
        holder: str,
        now: float,
        ttl_s: float,
        *,
        dead: Callable[[str], bool] = lambda holder: False,
    ) -> LockGrant:
        """Take or renew ``app``'s lease; another holder's is taken once expired or ``dead``."""
        with self._db() as db:
            row = db.execute("SELECT holder, expires FROM locks WHERE app = ?", (app,)).fetchone()
            if row is not None and row[0] != holder and row[1] > now and not dead(row[0]):
                return LockGrant(False, row[0], expires=row[1])
            db.execute(
                "INSERT OR REPLACE INTO locks VALUES (?, ?, ?, ?)", (app, holder, now, now + ttl_s)
            )
        previous = row[0] if row is not None and row[0] != holder else ""
        return LockGrant(True, holder, previous)

    def release(self, app: str, holder: str) -> None:
        with self._db() as db:
            db.execute("DELETE FROM locks WHERE app = ? AND holder = ?", (app, holder))

    # -- incidents ---------------------------------------------------------------------

    def save_incident(self, row: IncidentRow) -> None:
        self._put(row)

    def note_memory(self, incident: str, step: str, **data: Any) -> IncidentRow:
        """The incident's memory PR reached ``step`` (opened, merged, held)."""
        row = self.incident(incident)
        if row is None:
            raise UnknownTransaction(incident)
        row = row.with_data(memory={**row.data.get("memory", {}), "step": step, **data})
        self._put(row)
        return row

    def _put(self, row: IncidentRow) -> None:
        data = {"fingerprints": list(row.fingerprints), **row.data}
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO incidents VALUES (?, ?, ?, ?, ?)",
                (row.id, row.app, row.status, row.opened, json.dumps(data, sort_keys=True)),
            )

    def incident(self, incident_id: str) -> IncidentRow | None:
        rows = self._incidents("id = ?", (incident_id,))
        return rows[0] if rows else None

    def incidents(self, app: str, *, status: str | None = None) -> list[IncidentRow]:
        if status is None:
            return self._incidents("app = ?", (app,))
        return self._incidents("app = ? AND status = ?", (app, status))

    def _incidents(self, where: str, args: tuple[str, ...]) -> list[IncidentRow]:
        with self._db() as db:
            rows = db.execute(
                f"SELECT id, app, status, opened, data FROM incidents WHERE {where} "
                "ORDER BY opened, id",
                args,
            ).fetchall()
        out = []
        for ident, app, status, opened, text in rows:
            data = json.loads(text)
            prints = tuple(data.pop("fingerprints", ()))
            out.append(IncidentRow(ident, app, status, opened, prints, data))
        return out
