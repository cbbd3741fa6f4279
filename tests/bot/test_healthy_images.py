"""The monitor's record of images that ran healthy: in the journal (its SQLite file, or the
PostgreSQL replicas share), so a new process, or the replica that takes an app over, reads
what an earlier one saw; rewritten at most every REFRESH_S, newest first."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.controller.healthy_images import (
    KEPT,
    REFRESH_S,
    HealthyImages,
    healthy_containers,
)
from gitmedic.detectors.snapshot import Mode, Snapshot
from gitmedic.reconciler.transaction import Journal
from tests.detectors.test_cases import to_obj


def _pod(name: str, image_id: str, *, ready: bool = True) -> dict[str, Any]:
    flag = "True" if ready else "False"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "server", "image": "web:1"}]},
        "status": {
            "conditions": [{"type": "Ready", "status": flag}],
            "containerStatuses": [
                {
                    "name": "server",
                    "ready": ready,
                    "imageID": image_id,
                    "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                }
            ],
        },
    }


def _live(*pods: dict[str, Any]) -> Snapshot:
    return Snapshot([to_obj(p, "shop") for p in pods], mode=Mode.LIVE)


def test_only_ready_running_containers_count_as_healthy() -> None:
    seen = healthy_containers(
        _live(_pod("web-a", "web@sha256:aa"), _pod("web-b", "web@sha256:bb", ready=False))
    )

    assert [(s.workload, s.container, s.image, s.image_id) for s in seen] == [
        ("web-a", "server", "web:1", "web@sha256:aa")
    ]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    if request.param == "sqlite":
        return tmp_path / "journal.sqlite"
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_a_new_process_reads_what_an_earlier_one_saw_newest_first(target: Path | str) -> None:
    journal = Journal(target)
    first = HealthyImages(journal, "shop")
    assert first.observe(_live(_pod("web-a", "web@sha256:aa")), 100.0) == 1
    assert first.observe(_live(_pod("web-a", "web@sha256:aa")), 100.0 + REFRESH_S / 2) == 0
    assert first.observe(_live(_pod("web-a", "web@sha256:bb")), 200.0) == 1

    again = HealthyImages(Journal(target), "shop").seen()  # another process, or replica

    assert [(s.image_id, s.seen) for s in again] == [
        ("web@sha256:bb", 200.0),
        ("web@sha256:aa", 100.0),
    ]
    assert HealthyImages(journal, "other-app").seen() == ()


def test_only_the_newest_builds_of_a_container_are_kept(target: Path | str) -> None:
    store = HealthyImages(Journal(target), "shop")
    for i in range(KEPT + 3):
        store.observe(_live(_pod("web-a", f"web@sha256:{i:02d}")), float(i))

    kept = store.seen()

    assert len(kept) == KEPT and kept[0].image_id == f"web@sha256:{KEPT + 2:02d}"


def test_builds_seen_at_one_instant_are_listed_in_one_order(target: Path | str) -> None:
    """Two builds of a container healthy at once (mid-rollout): the same order on both
    databases and in every process, whatever order the pods were listed in."""
    first = HealthyImages(Journal(target), "shop")
    first.observe(_live(_pod("web-a", "web@sha256:bb"), _pod("web-b", "web@sha256:aa")), 50.0)
    seen = HealthyImages(Journal(target), "shop").seen()
    assert [(s.workload, s.image_id) for s in seen] == [
        ("web-a", "web@sha256:bb"),
        ("web-b", "web@sha256:aa"),
    ]


@pytest.mark.integration
def test_what_a_serve_of_before_kept_beside_a_postgresql_journal_moves_into_it(
    tmp_path: Path, postgres_url: str
) -> None:
    local = tmp_path / "local.sqlite"
    with sqlite3.connect(local) as db:  # the table as serve kept it in its own file
        db.executescript(
            "CREATE TABLE healthy_images (app TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT "
            "NOT NULL, workload TEXT NOT NULL, container TEXT NOT NULL, image TEXT NOT NULL, "
            "image_id TEXT NOT NULL, seen REAL NOT NULL, PRIMARY KEY (app, kind, namespace, "
            "workload, container, image_id));"
            "INSERT INTO healthy_images VALUES "
            "('shop', 'Deployment', 'shop', 'web', 'server', 'web:1', 'web@sha256:aa', 100.0),"
            "('blog', 'Deployment', 'blog', 'web', 'server', 'web:2', 'web@sha256:cc', 90.0);"
        )
    moved = HealthyImages(Journal(postgres_url, local=local), "shop")
    heir = HealthyImages(Journal(postgres_url), "shop").seen()  # a replica with no local file
    assert [(s.workload, s.image_id, s.seen) for s in heir] == [("web", "web@sha256:aa", 100.0)]
    assert moved.seen() == heir
    with sqlite3.connect(local) as db:
        left = db.execute("SELECT app FROM healthy_images").fetchall()
    assert left == [("blog",)], "the app's rows moved; the other app's wait for it"
    HealthyImages(Journal(postgres_url, local=local), "shop")  # opened again: nothing twice
    assert len(HealthyImages(Journal(postgres_url), "shop").seen()) == 1
