"""The sim deploys the branch a GitOps engine would track: the one named, else ``main``,
else ``master``, else the branch checked out (a repository whose default branch is
master made every ``run --cluster sim`` end "no branch main")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.sim.engine import GitSource, ManifestLoadError
from tests.manifests.helpers import commit_all, git, write

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"


def repo_on(root: Path, branch: str) -> tuple[Path, str]:
    root.mkdir()
    git(root, "init", "-q", "-b", branch)
    write(root, {"app/cm.yaml": CONFIGMAP})
    return root, commit_all(root)


@pytest.mark.parametrize("branch", ["main", "master", "trunk"])
def test_the_default_branch_is_deployed_whatever_its_name(tmp_path: Path, branch: str) -> None:
    repo, head = repo_on(tmp_path / "repo", branch)
    assert GitSource(repo / "app").head() == head


def test_main_wins_over_the_branch_checked_out(tmp_path: Path) -> None:
    repo, head = repo_on(tmp_path / "repo", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"app/other.yaml": CONFIGMAP.replace("settings", "other")})
    commit_all(repo)
    assert GitSource(repo / "app").head() == head


def test_a_named_branch_that_does_not_exist_is_said(tmp_path: Path) -> None:
    repo, _ = repo_on(tmp_path / "repo", "main")
    with pytest.raises(ManifestLoadError, match="no branch release to deploy"):
        GitSource(repo / "app", branch="release").head()


@pytest.mark.integration
def test_run_once_on_a_master_repository_deploys_it(tmp_path: Path) -> None:
    repo, _ = repo_on(tmp_path / "repo", "master")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "run",
            str(repo),
            "--cluster",
            "sim",
            "--forge",
            "local",
            "--once",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "no branch" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
