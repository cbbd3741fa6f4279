"""Benign commits on slow-starting real apps open no incident and no pull request.

sock-shop's and train-ticket's services wait 160-300 s before their first
readiness probe. A replica bump, a pod label, a pod annotation and an env var
the app does not read, each committed on a slow starter, then ``gitmedic run
--cluster sim --forge local --once`` as a user types it: healthy, nothing opened.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import BENIGN
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.bot.cli_world import gitmedic, prs
from tests.conftest import APPS

pytestmark = pytest.mark.integration

CHANGES = ("scale-up", "pod-label", "pod-annotation", "env-added")
SOCK_SHOP_SLOW = ("catalogue", "front-end", "payment", "user")  # readiness after 30-180 s
TRAIN_TICKET_SLOW = (
    "ts-order-service",
    "ts-travel-service",
    "ts-user-service",
    "ts-station-service",
)  # readiness after 160 s
APPS_UNDER_TEST = {  # app -> (manifests, namespace, slow starters to change)
    "sock-shop": ("deploy/kubernetes/complete-demo.yaml", "sock-shop", SOCK_SHOP_SLOW),
    "train-ticket": (
        "deployment/kubernetes-manifests/quickstart-k8s",
        "train-ticket",
        TRAIN_TICKET_SLOW,
    ),
}


def _repo(tmp: Path, name: str) -> tuple[Path, str, str]:
    manifests, namespace, _ = APPS_UNDER_TEST[name]
    repo, src = tmp / "repo", APPS / name / manifests
    dst = repo / "apps" / name / src.name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        dst.parent.mkdir(parents=True)
        shutil.copy(src, dst)
    init_repo(repo)
    return repo, f"apps/{name}", namespace


@pytest.mark.parametrize("name", sorted(APPS_UNDER_TEST))
def test_benign_commits_on_slow_starters_open_nothing(tmp_path: Path, name: str) -> None:
    repo, app, namespace = _repo(tmp_path, name)
    for change, target in zip(CHANGES, APPS_UNDER_TEST[name][2], strict=True):
        BENIGN[change](repo, load_desired(repo / app, namespace=namespace).snapshot, target)
        commit_all(repo, f"{change} on {target}")

    argv: list[str | Path] = ["run", repo, "--path", app, "--namespace", namespace]
    done = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")

    assert done.rc == 0, done.err
    assert done.json() == {"healthy": True, "incidents": []}
    assert prs(repo) == []
