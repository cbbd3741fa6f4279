"""A queued ``/gitmedic retry`` carried out on the fault it named, across a restart of serve.

A person's retry names an incident (the one in the PR's state marker), and the
queue (:mod:`gitmedic.bot.pending`) keeps it through a restart. But incidents
live in the loop's memory and their ids carry the time they opened: a restarted
loop reopens the same fault under a new id, so the old id is never open again.
What the person meant is the fault, so the retry is resolved by its findings:

1. the named incident is open: the loop retries it (no restart came between);
2. the loop has not evaluated since this process started: nothing is known
   yet, the item stays queued;
3. the app's open incident carries one of the findings the named incident's
   transactions targeted (the journal keeps their fingerprints): the retry
   applies to it. The monitor carries queued work right after each evaluation,
   so this happens in the step the incident reopens, inside its debounce and
   before the loop would answer it by itself: one new attempt, not two. A
   retry asked after the loop answered the reopened incident is a new attempt
   on top, as a retry of an open incident always is;
4. those findings still fire but no incident holds them yet (they have not
   persisted long enough, or wait behind another incident): stays queued;
5. otherwise the fault is gone, and the result says so.

``None`` means "still queued, decide at a later step"; any text is the result,
recorded with the item and told on the PR.
"""

from __future__ import annotations

from gitmedic.bot.loop.loop import Loop
from gitmedic.bot.responder.incident import Incident


def retry_queued(loop: Loop, incident_id: str) -> str | None:
    """Carry out a queued retry of ``incident_id`` now, or None to keep it queued."""
    if loop.open_incident(incident_id) is not None:
        return loop.retry(incident_id)
    if loop.evaluations == 0:
        return None
    prints = targeted(loop, incident_id)
    if not prints:
        return f"the journal has no findings of incident {incident_id}: nothing to retry"
    match = same_fault(loop, prints)
    if match is not None:
        return _retry_reopened(loop, incident_id, match)
    if prints & {f.fingerprint for f in loop.findings}:
        return None
    return (f"incident {incident_id} is closed and its findings are no longer seen: "
            "the fault is gone, so there is nothing to retry")  # fmt: skip


def targeted(loop: Loop, incident_id: str) -> frozenset[str]:
    """Fingerprints of the findings the incident's transactions set out to clear."""
    states = loop.journal.transactions(incident=incident_id)
    return frozenset(fp for state in states for fp in state.plan.targets)


def same_fault(loop: Loop, prints: frozenset[str]) -> Incident | None:
    """The app's open incident when it carries any of those findings."""
    current = loop.incidents.open.get(loop.config.app)
    if current is None or not prints & {f.fingerprint for f in current.findings}:
        return None
    return current


def _retry_reopened(loop: Loop, incident_id: str, match: Incident) -> str:
    reopened = f"incident {incident_id}'s fault is open again as incident {match.id}"
    return f"{reopened}; retried it: {loop.retry(match.id)}"
