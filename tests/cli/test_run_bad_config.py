"""``gitmedic run`` on a repository whose ``.gitmedic/config.yaml`` is invalid: a usage
error naming the file and the line of each problem, exit 2, no traceback, and nothing
changed (no branch, no commit, no journal). Through the real command, in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.manifests.helpers import CM, commit_all, init_repo

pytestmark = pytest.mark.integration

CONFIG = """\
version: 1
apps:
  - name: web
    path: app
    oracles:
      probes:
        - url: http://web/healthz
        - {url: 5}
"""


def test_an_invalid_config_is_a_usage_error_naming_its_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".gitmedic").mkdir(parents=True)
    (repo / "app").mkdir()
    (repo / "app" / "cm.yaml").write_text(CM.format(name="a"))
    (repo / ".gitmedic" / "config.yaml").write_text(CONFIG)
    init_repo(repo)
    commit_all(repo, "app")
    before = _git(repo, "for-each-ref"), _git(repo, "status", "--porcelain")
    argv = [sys.executable, "-m", "gitmedic", "run", "--cluster", "sim", "--forge", "local"]
    done = subprocess.run(
        [*argv, "--once", str(repo)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    config = repo / ".gitmedic" / "config.yaml"
    assert f"{config}:8: apps[0].oracles.probes[1].url: 5 is not of type 'string'" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert (_git(repo, "for-each-ref"), _git(repo, "status", "--porcelain")) == before
    assert not (repo / ".git" / "gitmedic").exists()  # no journal, no sim state


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout
