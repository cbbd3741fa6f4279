"""The images the monitor saw run healthy, per container, kept in the journal.

The image-rollback lever (:mod:`gitmedic.bot.responder.levers.rollback`) needs
"the last image that ran healthy before the incident", and Git cannot say: a
tag pushed again out of band, or an image changed long ago that only now
fails, leaves no recent commit. So each evaluation the loop notes, for every
container that is Ready and running, the image its pod spec names and the
build it runs (``imageID``: ``repo@sha256:...``), with the time; a restarted
process reads what the one before it saw. A row is rewritten at most every
:data:`REFRESH_S` per container and build (an idle cluster costs no writes),
and :data:`KEPT` builds are kept per container.

The rows are the journal's (``healthy_images``, SQLite or the PostgreSQL replicas
share): a replica that takes an app over reads what its holder saw until then, never
only what it saw itself while it last held it, which would make an older build "the
last that ran healthy". A serve of before kept them in its SQLite file beside a
PostgreSQL journal; the app's rows there are moved in when the app's record opens.
"""

from __future__ import annotations

from gitmedic.bot.common import sqlite_file
from gitmedic.bot.responder.levers.evidence import SeenHealthy
from gitmedic.detectors.builtin._pods import is_ready
from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.reconciler.transaction import Journal
from gitmedic.reconciler.transaction.journal_store import SqliteStore, Tx

REFRESH_S = 300.0
KEPT = 10
_COLUMNS = "app, kind, namespace, workload, container, image, image_id, seen"
_INSERT = f"INSERT INTO healthy_images ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
_UPSERT = (
    f"{_INSERT} (app, kind, namespace, workload, container, image_id) "
    "DO UPDATE SET image = excluded.image, seen = excluded.seen"
)
_CONTAINER = "app = ? AND kind = ? AND namespace = ? AND workload = ? AND container = ?"


class HealthyImages:
    """One app's record of the images that ran healthy."""

    def __init__(self, journal: Journal, app: str) -> None:
        self.journal = journal
        self.app = app
        self._written: dict[tuple[str, ...], float] = {}
        _adopt_local(journal, app)

    def observe(self, snapshot: Snapshot, now: float) -> int:
        """Note the healthy containers of ``snapshot``; returns how many rows were written."""
        due = [s for s in healthy_containers(snapshot) if self._due(s, now)]
        if not due:
            return 0
        with self.journal.store.transaction() as db:
            for seen in due:
                where = (self.app, seen.kind, seen.namespace, seen.workload, seen.container)
                db.execute(_UPSERT, (*where, seen.image, seen.image_id, now))
                self._trim(db, where)
        for seen in due:  # once written: a failed write is tried again at the next look
            self._written[_key(seen)] = now
        return len(due)

    def seen(self) -> tuple[SeenHealthy, ...]:
        """Every record of the app, newest first (builds seen at one instant: by name)."""
        with self.journal.store.transaction() as db:
            rows = db.execute(
                "SELECT kind, namespace, workload, container, image, image_id, seen FROM "
                "healthy_images WHERE app = ? "
                "ORDER BY seen DESC, kind, namespace, workload, container, image_id",
                (self.app,),
            )
        return tuple(_record(row) for row in rows)

    def _due(self, seen: SeenHealthy, now: float) -> bool:
        last = self._written.get(_key(seen))
        return last is None or now - last >= REFRESH_S

    @staticmethod
    def _trim(db: Tx, where: tuple[str, ...]) -> None:
        db.execute(
            f"DELETE FROM healthy_images WHERE {_CONTAINER} AND image_id NOT IN (SELECT "
            f"image_id FROM healthy_images WHERE {_CONTAINER} ORDER BY seen DESC LIMIT ?)",
            (*where, *where, KEPT),
        )


def _adopt_local(journal: Journal, app: str) -> None:
    """The app's rows a serve of before kept in the SQLite file beside a PostgreSQL
    journal, moved into the journal (then deleted there: copied twice is one row)."""
    if isinstance(journal.store, SqliteStore):
        return  # a SQLite journal's own file: they are the journal's already
    path = journal.local
    if path is None:  # no local file
        return
    query = f"SELECT {_COLUMNS} FROM healthy_images WHERE app = ?"
    rows = sqlite_file.table_rows(path, "healthy_images", query, (app,))
    if not rows:
        return
    with journal.store.transaction() as tx:
        for row in rows:
            tx.execute(f"{_INSERT} DO NOTHING", row)
    with sqlite_file.connect(path) as db:
        db.execute("DELETE FROM healthy_images WHERE app = ?", (app,))


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
