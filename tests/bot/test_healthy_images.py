"""The monitor's record of images that ran healthy: in the journal's SQLite file, so a new
process reads what an earlier one saw; rewritten at most every REFRESH_S, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_a_new_process_reads_what_an_earlier_one_saw_newest_first(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    first = HealthyImages(journal, "shop")
    assert first.observe(_live(_pod("web-a", "web@sha256:aa")), 100.0) == 1
    assert first.observe(_live(_pod("web-a", "web@sha256:aa")), 100.0 + REFRESH_S / 2) == 0
    assert first.observe(_live(_pod("web-a", "web@sha256:bb")), 200.0) == 1

    again = HealthyImages(Journal(tmp_path / "journal.sqlite"), "shop").seen()

    assert [(s.image_id, s.seen) for s in again] == [
        ("web@sha256:bb", 200.0),
        ("web@sha256:aa", 100.0),
    ]
    assert HealthyImages(journal, "other-app").seen() == ()


def test_only_the_newest_builds_of_a_container_are_kept(tmp_path: Path) -> None:
    store = HealthyImages(Journal(tmp_path / "journal.sqlite"), "shop")
    for i in range(KEPT + 3):
        store.observe(_live(_pod("web-a", f"web@sha256:{i:02d}")), float(i))

    kept = store.seen()

    assert len(kept) == KEPT and kept[0].image_id == f"web@sha256:{KEPT + 2:02d}"
