"""The sim's known-good: which revisions of an app ran healthy, and so what its images can run.

The sim cannot ask a registry which images exist or what an image can run; it
learns both from revisions that ran (:mod:`gitmedic.sim.catalog`). Learning
from "the commits before HEAD" lets a fault a few commits old, or the bot's own
undone candidate, pass as known-good: a second ``run --once`` on a repo the
bot fixed then saw the faulty commit's command as the one expected, and a
phantom fault in the restored one. So the known-good is explicit, in this
order:

1. ``sim.known_good`` of the app's config: a revision a person vouches for
   (checked to name a commit, else a clear error and nothing runs);
2. the revisions the bot verified healthy (``gitmedic run --once`` ending
   healthy with that revision deployed), kept in the journal's SQLite file,
   newest first;
3. with neither, and an incident in the journal, the history before where the
   live one began, else the newest resolved one (:func:`incident_history_rev`), so
   a restarted sim knows what the one before it knew: a resolved incident counts
   too, since the revision is verified only once the app stayed healthy after it
   (the end of ``run --once``), and a process killed in between left no live
   incident and no verified revision, so its successor learned from the history
   before HEAD, the faulty commits and the undone candidate among it, and saw a
   phantom fault in the restored app;
4. with nothing at all (a first run), the history before HEAD, as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.controller.state_db import state_db
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction import Journal

KEPT = 20  # verified revisions kept per app (what a catalogue learns from at most)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS verified_healthy (
    app TEXT NOT NULL, rev TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (app, rev)
);
"""


class KnownGoodError(Exception):
    """The configured known-good revision does not name a commit of the repo."""


@dataclass(frozen=True)
class KnownGood:
    """What the sim learns from: ``revisions`` (healthy, best first) or, with none, the
    history before ``history_rev`` (None: before HEAD); ``source`` says which, for people."""

    revisions: tuple[str, ...] = ()
    history_rev: str | None = None
    source: str = "the history before HEAD"


class VerifiedRevisions:
    """The revisions of each app the bot saw deployed and healthy, in the journal's file."""

    def __init__(self, journal: Journal) -> None:
        self.path = journal.path

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return state_db(self.path, _SCHEMA)

    def record(self, app: str, rev: str, at: float) -> None:
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO verified_healthy VALUES (?, ?, ?)", (app, rev, at))
            db.execute(
                "DELETE FROM verified_healthy WHERE app = ? AND rev NOT IN (SELECT rev FROM "
                "verified_healthy WHERE app = ? ORDER BY at DESC, rowid DESC LIMIT ?)",
                (app, app, KEPT),
            )

    def newest_first(self, app: str) -> tuple[str, ...]:
        with self._db() as db:
            rows = db.execute(
                "SELECT rev FROM verified_healthy WHERE app = ? ORDER BY at DESC, rowid DESC",
                (app,),
            ).fetchall()
        return tuple(str(r[0]) for r in rows)


def note_healthy(
    journal: Journal, app: str, head: str, check: Callable[[str], SyncState], at: float
) -> bool:
    """Record ``head`` as verified healthy if the engine reports it deployed (the loop just
    judged the app healthy); False when it is not what runs."""
    if check(head).phase is not SyncPhase.DEPLOYED:
        return False
    VerifiedRevisions(journal).record(app, head, at)
    return True


def known_good(repo: Path, configured: str, journal: Journal, app: str) -> KnownGood:
    """The sim's known-good for ``app``, by the order of the module docstring."""
    if configured:
        return KnownGood((resolve(repo, configured),), source=f"sim.known_good {configured}")
    verified = VerifiedRevisions(journal).newest_first(app)
    if verified:
        return KnownGood(verified, source=f"revision {verified[0][:12]}, verified healthy")
    pinned = incident_history_rev(journal, app)
    if pinned:
        return KnownGood(history_rev=pinned, source=f"the history before {pinned[:12]}")
    return KnownGood()


def resolve(repo: Path, rev: str) -> str:
    proc = gitcmd.run(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if proc.returncode != 0 or not proc.stdout.strip():
        raise KnownGoodError(
            f"sim.known_good: {rev!r} is not a commit of {repo} "
            "(name a branch, tag or SHA that ran healthy)"
        )
    return proc.stdout.strip()


def incident_history_rev(journal: Journal, app: str) -> str | None:
    """Where the app's live incident began (the base of its first attempt); with none
    live, where the newest resolved one began; else None. By attempt, not by the journal's
    order: that is by creation time on the sim's clock, which starts at the same epoch in
    every process, so a memory PR or a later attempt created after a restart can come
    first, and its base (after the fault) holds the faulty commits in its history."""
    rows = journal.incidents(app)  # oldest first
    first: dict[str, tuple[int, str]] = {}
    for t in journal.transactions(app=app):
        if t.plan.strategy == "memory":  # the memory PR's base is the fixed main
            continue
        seen = first.get(t.plan.incident)
        if seen is None or t.plan.attempt < seen[0]:
            first[t.plan.incident] = (t.plan.attempt, t.plan.base_sha)
    live = [r for r in rows if r.status in ("open", "escalated") and r.id in first]
    if live:
        return first[live[0].id][1]
    resolved = [r for r in rows if r.status == "resolved" and r.id in first]
    return first[resolved[-1].id][1] if resolved else None
