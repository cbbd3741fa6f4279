"""Commits that change no semantics open nothing, through the real ``gitmedic run``.

online-boutique, healthy, then two commits a tidy-minded person makes: every key
sorted, four-space indents and every string quoted; then the one file split into
one file per object under new names. ``run --once`` sees the same app: no incident,
no pull request, no issue.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.git import Git
from tests.bot.cli_world import git, prs, run_app
from tests.bot.run_world import app_repo
from tests.responder.noop import restyle, split_and_rename

pytestmark = pytest.mark.integration


def test_restyled_and_moved_manifests_open_no_incident_and_no_pull_request(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    manifest = repo / app / "kubernetes-manifests.yaml"
    restyle(Git(repo), [manifest])
    split_and_rename(Git(repo), [manifest], repo / app / "objects")
    head = git(repo, "rev-parse", "HEAD")

    done = run_app(repo, app, namespace)

    assert done.rc == 0, done.err
    assert done.json() == {"healthy": True, "incidents": []}
    assert prs(repo) == []
    assert git(repo, "rev-parse", "main") == head
