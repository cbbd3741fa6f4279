"""Incidents in the journal: stable ids from what fires, and their state across restarts.

An incident's id is ``<app>-<digest>[-<n>]``: the digest of the fingerprints that
opened it (never the time it opened), and ``n`` counts earlier incidents of the
same digest that were closed, so the same fault coming back a week later is a
new incident with its own branches. A restarted process that sees a fault the
journal holds open (or escalated) names it with that incident's id again: its
attempts, their feedback, the candidates already undone and what they caused
all come back with it, from the transactions naming it.

Rows: ``open`` (being answered), ``escalated`` (a person has it), ``resolved``
(its findings cleared, or its fix committed and remembered), ``gone`` (held
open by a process that died, and what fires now is another fault).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from gitmedic.bot.responder.incident import Incident
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.transaction import IncidentRow, Journal

LIVE = ("open", "escalated")  # a fault still being answered, or with a person


def digest_of(app: str, findings: Iterable[Finding]) -> str:
    prints = "\n".join(sorted(f.fingerprint for f in findings))
    return hashlib.sha256(f"{app}\n{prints}".encode()).hexdigest()[:8]


def slug_of(app: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", app.lower()).strip("-") or "app"


class IncidentBook:
    """One app's incidents as the journal keeps them."""

    def __init__(self, journal: Journal, app: str) -> None:
        self.journal = journal
        self.app = app

    def name(self, app: str, initial: tuple[Finding, ...]) -> str:
        """The id of a newly opened incident (the Incidents' namer)."""
        prints = {f.fingerprint for f in initial}
        for row in self.live():
            if prints & set(row.fingerprints):
                return row.id  # the fault a previous process was answering: resume it
        for row in self.live():  # another fault now: that one is not seen any more
            self.journal.save_incident(_status(row, "gone"))
        base = f"{slug_of(app)}-{digest_of(app, initial)}"
        taken = sum(1 for r in self.journal.incidents(self.app) if r.id.startswith(base))
        return base if not taken else f"{base}-{taken + 1}"

    def live(self) -> list[IncidentRow]:
        return [r for r in self.journal.incidents(self.app) if r.status in LIVE]

    def row(self, incident_id: str) -> IncidentRow | None:
        return self.journal.incident(incident_id)

    def seen(self, incident: Incident) -> IncidentRow:
        """Record the incident as it is now (opened or grown); its status is kept."""
        row = self.journal.incident(incident.id)
        status = row.status if row is not None and row.status in LIVE else "open"
        data = dict(row.data) if row is not None else {}
        data["findings"] = [f.to_json() for f in incident.findings]
        updated = IncidentRow(
            incident.id,
            self.app,
            status,
            row.opened if row is not None else incident.opened_at,
            tuple(sorted({f.fingerprint for f in incident.findings})),
            data,
        )
        if updated != row:
            self.journal.save_incident(updated)
        return updated

    def mark(self, incident_id: str, status: str, **data: object) -> None:
        row = self.journal.incident(incident_id)
        if row is not None and (row.status, {**row.data, **data}) != (status, row.data):
            self.journal.save_incident(_status(row.with_data(**data), status))


def incident_of(row: IncidentRow) -> Incident:
    """The incident a journal row describes (without the live snapshots of its time)."""
    findings = tuple(Finding.from_json(f) for f in row.data.get("findings", ()))
    return Incident(row.id, row.app, row.opened, findings)


def _status(row: IncidentRow, status: str) -> IncidentRow:
    return IncidentRow(row.id, row.app, status, row.opened, row.fingerprints, row.data)
