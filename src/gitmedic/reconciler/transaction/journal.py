"""The journal: transactions, incidents and the per-application writer lease.

It lives in SQLite (WAL), the embedded default, or in PostgreSQL when more than one
replica shares it (a ``postgresql://`` URL, :mod:`.journal_pg`); both run the same
SQL through a :class:`~.journal_store.Store` and the same contract suite
(tests/transaction/test_journal_contract.py).

Records are append-only and keyed by (transaction, sequence number): a second
writer appending the same step loses with :class:`JournalConflict` instead of
forking history. Incidents are rows keyed by their stable id (derived from the
fingerprints that fired, :mod:`gitmedic.bot.controller.incidents`), so a restarted
process finds the incident it was answering, its attempts (the transactions
naming it) and its memory PR. Incidents are listed in the journal's order (``seq``, given
at a row's first write), never by the time they opened: that is the cluster's clock,
and the sim's starts at the same epoch in every process, so after a restart a newer
incident can have opened "before" an older one. Intents are what people asked of an app
(a retry, a merge) for the holder of its lease to carry out: rows of the journal, so any
replica may record one and the replica holding the app acts on it. Locks carry an
expiry so a crashed holder's lock can be taken over (at once when the holder is known
dead, see :mod:`~gitmedic.reconciler.transaction.lease`), and the takeover names the
previous holder for the log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gitmedic.reconciler.transaction.journal_pg import is_postgres_url
from gitmedic.reconciler.transaction.journal_store import DuplicateKey, SqliteStore, Store, Tx
from gitmedic.reconciler.transaction.model import Phase, Plan, Record, TxnState


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


@dataclass(frozen=True)
class IntentRow:
    """One thing asked of an app and not carried out yet (``kind``: what, ``key``: of what)."""

    app: str
    kind: str
    key: str
    data: Mapping[str, Any]
    queued: float


class Journal:
    """``target``: a SQLite file, or a ``postgresql://`` URL. ``local``: the file for
    state kept on this host beside a PostgreSQL journal (what each replica remembers
    for itself: known-good images); a SQLite journal keeps it in its own file."""

    def __init__(self, target: str | Path, *, local: Path | None = None) -> None:
        self.store: Store
        if is_postgres_url(target):
            from gitmedic.reconciler.transaction.journal_pg import PostgresStore

            self.store = PostgresStore(str(target))
            self._local = local
            if local is not None:  # made as a SQLite journal's folder is (serve's per app)
                local.parent.mkdir(parents=True, exist_ok=True)
        else:
            sqlite = SqliteStore(Path(target))
            self.store, self._local = sqlite, local or sqlite.path

    @property
    def path(self) -> Path:
        """The local SQLite file for state kept beside the journal (see ``local``)."""
        if self._local is None:
            raise ValueError(f"the journal at {self.store.where} has no local file")
        return self._local

    @property
    def local(self) -> Path | None:
        """That file, or None for a PostgreSQL journal opened without one."""
        return self._local

    @property
    def where(self) -> str:
        """The file or the URL (its password redacted), for messages."""
        return self.store.where

    def close(self) -> None:
        """Let go of the database connection (PostgreSQL's; a SQLite journal holds none)."""
        self.store.close()

    def _db(self) -> AbstractContextManager[Tx]:
        return self.store.transaction()

    # -- transactions ------------------------------------------------------------------

    def create(self, plan: Plan, now: float, *, first: Record | None = None) -> TxnState:
        """Record a new transaction; creating one that exists returns it unchanged.

        ``first``: a transaction that starts past ``planned`` (the watch of a merge a
        person already made), its first record written in the same database transaction,
        so no process ever sees it planned."""
        data = json.dumps(plan.to_json())
        with self._db() as db:
            db.execute(
                "INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (txn_id) DO NOTHING",
                (plan.txn_id, plan.app, plan.incident, plan.attempt, data, now),
            )
            if first is not None:
                db.execute(
                    "INSERT INTO records VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (txn_id, seq) DO NOTHING",
                    (
                        plan.txn_id,
                        first.seq,
                        first.phase.value,
                        first.at,
                        json.dumps(dict(first.data), sort_keys=True),
                    ),
                )
        return self.load(plan.txn_id)

    def load(self, txn_id: str) -> TxnState:
        with self._db() as db:
            found = db.execute("SELECT plan FROM transactions WHERE txn_id = ?", (txn_id,))
            if not found:
                raise UnknownTransaction(txn_id)
            rows = db.execute(
                "SELECT seq, phase, at, data FROM records WHERE txn_id = ? ORDER BY seq", (txn_id,)
            )
        plan = Plan.from_json(json.loads(found[0][0]))
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
        except DuplicateKey:
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
        """Take or renew ``app``'s lease; another holder's is taken once expired or ``dead``.

        The row is read locked (``FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` already
        serializes writers) and written only if its holder is still the one read, so
        of two processes racing for a free or expired lease exactly one gets it: the
        loser's conditional upsert finds the winner's row and writes nothing.
        """
        with self._db() as db:
            found = db.execute(
                f"SELECT holder, expires FROM locks WHERE app = ?{self._for_update}", (app,)
            )
            row = found[0] if found else None
            if row is not None and row[0] != holder and row[1] > now and not dead(row[0]):
                return LockGrant(False, row[0], expires=row[1])
            written = db.execute(
                "INSERT INTO locks VALUES (?, ?, ?, ?) ON CONFLICT (app) DO UPDATE SET "
                "holder = excluded.holder, acquired = excluded.acquired, "
                "expires = excluded.expires WHERE locks.holder = ? RETURNING holder",
                (app, holder, now, now + ttl_s, holder if row is None else row[0]),
            )
            if not written:  # another process wrote the row after we read it: theirs
                current = db.execute("SELECT holder, expires FROM locks WHERE app = ?", (app,))
                return LockGrant(False, current[0][0], expires=current[0][1])
        previous = row[0] if row is not None and row[0] != holder else ""
        return LockGrant(True, holder, previous)

    def lock_of(self, app: str) -> tuple[str, float] | None:
        """(holder, expires) of ``app``'s lease as the journal holds it; a read, no write."""
        with self._db() as db:
            found = db.execute("SELECT holder, expires FROM locks WHERE app = ?", (app,))
        return (str(found[0][0]), float(found[0][1])) if found else None

    @property
    def _for_update(self) -> str:
        return "" if isinstance(self.store, SqliteStore) else " FOR UPDATE"

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
            db.execute(  # seq: the next of the journal's at the first write, then kept
                "INSERT INTO incidents (id, app, status, opened, data, seq) VALUES "
                "(?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM incidents)) "
                "ON CONFLICT (id) DO UPDATE SET app = excluded.app, status = excluded.status, "
                "opened = excluded.opened, data = excluded.data",
                (row.id, row.app, row.status, row.opened, json.dumps(data, sort_keys=True)),
            )

    def incident(self, incident_id: str) -> IncidentRow | None:
        rows = self._incidents("id = ?", (incident_id,))
        return rows[0] if rows else None

    def incidents(self, app: str, *, status: str | None = None) -> list[IncidentRow]:
        """``app``'s incidents (of ``status``), in the order the journal first wrote them."""
        if status is None:
            return self._incidents("app = ?", (app,))
        return self._incidents("app = ? AND status = ?", (app, status))

    def _incidents(self, where: str, args: tuple[str, ...]) -> list[IncidentRow]:
        with self._db() as db:
            rows = db.execute(
                f"SELECT id, app, status, opened, data FROM incidents WHERE {where} "
                "ORDER BY seq, opened, id",
                args,
            )
        out = []
        for ident, app, status, opened, text in rows:
            data = json.loads(text)
            prints = tuple(data.pop("fingerprints", ()))
            out.append(IncidentRow(ident, app, status, opened, prints, data))
        return out

    # -- intents -----------------------------------------------------------------------
    # Append-only but for one ``done`` marker, set once the item was carried out: a crash
    # before it repeats the item, never drops it. The partial unique index on (app, kind,
    # key) among rows not done makes adding idempotent while one is open; once done, the
    # same key may be asked again (a second retry after the first failed).

    def add_intent(
        self, app: str, kind: str, key: str, data: Mapping[str, Any], now: float
    ) -> bool:
        """Record an intent; False when the same one is already open (nothing written)."""
        text = json.dumps(dict(data), sort_keys=True)
        with self._db() as db:
            added = db.execute(
                "INSERT INTO intents (app, kind, key, data, queued) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING RETURNING id",
                (app, kind, key, text, now),
            )
        return bool(added)

    def intents(self, app: str) -> list[IntentRow]:
        """``app``'s open intents of every kind, oldest first: one read per tick."""
        with self._db() as db:
            rows = db.execute(
                "SELECT kind, key, data, queued FROM intents WHERE app = ? AND done = 0 "
                "ORDER BY queued, id",
                (app,),
            )
        return [IntentRow(app, kind, key, json.loads(data), at) for kind, key, data, at in rows]

    def finish_intent(self, app: str, kind: str, key: str, result: str = "") -> None:
        """Mark the open intent carried out; its row stays as the record of it."""
        with self._db() as db:
            db.execute(
                "UPDATE intents SET done = 1, result = ? "
                "WHERE app = ? AND kind = ? AND key = ? AND done = 0",
                (result, app, kind, key),
            )

    # -- webhook deliveries seen by any replica ----------------------------------------

    def first_seen(self, keys: Sequence[str], now: float, *, forget_before: float) -> bool:
        """Record ``keys`` (a delivery's id and its body's digest) as seen; False, and
        nothing written, when one of them was seen since ``forget_before`` (older keys
        are forgotten here). Of replicas recording one key at once, exactly one is first:
        the other's insert hits the key and its whole write is rolled back."""
        try:
            with self._db() as db:
                db.execute("DELETE FROM deliveries_seen WHERE received < ?", (forget_before,))
                for key in keys:
                    db.execute("INSERT INTO deliveries_seen VALUES (?, ?)", (key, now))
        except DuplicateKey:
            return False
        return True
