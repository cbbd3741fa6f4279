"""The images the monitor saw run healthy, per container, kept in the journal's SQLite file.

The image-rollback lever (:mod:`gitmedic.bot.responder.levers.rollback`) needs
"the last image that ran healthy before the incident", and Git cannot say: a
tag pushed again out of band, or an image changed long ago that only now
fails, leaves no recent commit. So each evaluation the loop notes, for every
container that is Ready and running, the image its pod spec names and the
build it runs (``imageID``: ``repo@sha256:...``), with the time; a restarted
process reads what the one before it saw. A row is rewritten at most every
:data:`REFRESH_S` per container and build (an idle cluster costs no writes),
and :data:`KEPT` builds are kept per container.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager

from gitmedic.bot.controller.state_db import state_db
from gitmedic.bot.responder.levers.evidence import SeenHealthy
from gitmedic.detectors.builtin._pods import is_ready
from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.reconciler.transaction import Journal

REFRESH_S = 300.0
KEPT = 10
_SCHEMA = """
CREATE TABLE IF NOT EXISTS healthy_images (
    app TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, workload TEXT NOT NULL,
    container TEXT NOT NULL, image TEXT NOT NULL, image_id TEXT NOT NULL, seen REAL NOT NULL,
    PRIMARY KEY (app, kind, namespace, workload, container, image_id)
);
"""


class HealthyImages:
    """One app's record of the images that ran healthy."""

    def __init__(self, journal: Journal, app: str) -> None:
        self.path = journal.path
        self.app = app
        self._written: dict[tuple[str, ...], float] = {}

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return state_db(self.path, _SCHEMA)

    def observe(self, snapshot: Snapshot, now: float) -> int:
        """Note the healthy containers of ``snapshot``; returns how many rows were written."""
        due = [s for s in healthy_containers(snapshot) if self._due(s, now)]
        if not due:
            return 0
        with self._db() as db:
            for seen in due:
                where = (self.app, seen.kind, seen.namespace, seen.workload, seen.container)
                row = (*where, seen.image, seen.image_id, now)
                db.execute(
                    "INSERT OR REPLACE INTO healthy_images VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row
                )
                self._written[_key(seen)] = now
                self._trim(db, seen)
        return len(due)

    def seen(self) -> tuple[SeenHealthy, ...]:
        """Every record of the app, newest first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT kind, namespace, workload, container, image, image_id, seen FROM "
                "healthy_images WHERE app = ? ORDER BY seen DESC, rowid DESC",
                (self.app,),
            ).fetchall()
        return tuple(_record(row) for row in rows)

    def _due(self, seen: SeenHealthy, now: float) -> bool:
        last = self._written.get(_key(seen))
        return last is None or now - last >= REFRESH_S

    def _trim(self, db: sqlite3.Connection, seen: SeenHealthy) -> None:
        where = "app = ? AND kind = ? AND namespace = ? AND workload = ? AND container = ?"
        args = (self.app, seen.kind, seen.namespace, seen.workload, seen.container)
        db.execute(
            f"DELETE FROM healthy_images WHERE {where} AND image_id NOT IN (SELECT image_id "
            f"FROM healthy_images WHERE {where} ORDER BY seen DESC LIMIT ?)",
            (*args, *args, KEPT),
        )


def healthy_containers(snapshot: Snapshot) -> list[SeenHealthy]:
    """The containers of Ready pods that are ready and running, with what they run."""
    out: dict[tuple[str, ...], SeenHealthy] = {}
    for pod in snapshot.of_kind("Pod"):
        if not is_ready(pod):
            continue
        owner = snapshot.owner_workload(pod)
        images = {
            str(mapping(c).get("name")): str(mapping(c).get("image") or "")
            for c in as_list(pod.spec.get("containers"))
        }
        for status in (mapping(s) for s in as_list(pod.status.get("containerStatuses"))):
            name, image_id = str(status.get("name")), str(status.get("imageID") or "")
            running = mapping(mapping(status.get("state")).get("running"))
            if not status.get("ready") or not running or not image_id or not images.get(name):
                continue
            seen = SeenHealthy(
                owner.kind, owner.namespace, owner.name, name, images[name], image_id, 0.0
            )
            out.setdefault(_key(seen), seen)
    return list(out.values())


def _record(row: tuple[object, ...]) -> SeenHealthy:
    kind, namespace, workload, container, image, image_id, seen = (str(v) for v in row)
    return SeenHealthy(kind, namespace, workload, container, image, image_id, float(seen))


def _key(seen: SeenHealthy) -> tuple[str, ...]:
    return (seen.kind, seen.namespace, seen.workload, seen.container, seen.image_id)
