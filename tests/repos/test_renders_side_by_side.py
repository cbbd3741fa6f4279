"""A working tree's kustomize roots and charts render side by side; what ``detect``
reports is exactly what the same commit gives read one render at a time (``--rev``:
a revision's tree reads through one git process, so it never renders concurrently)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, copy_app, init_repo
from tests.support.tools import tool_path

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


@pytest.mark.integration
def test_side_by_side_reports_what_one_at_a_time_does(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    # seven kustomize roots (three overlays of four bases, two more trees) and a chart
    copy_app(CORPUS / "podinfo-deploy" / "deploy", repo / "deploy")
    copy_app(CORPUS / "podinfo-chart" / "charts", repo / "charts")
    commit_all(repo, "podinfo")
    helm = str(Path(tool_path("helm")).parent)
    env = {**os.environ, "PATH": f"{helm}{os.pathsep}{os.environ.get('PATH', '')}"}

    def detect(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "gitmedic", "detect", ".", "--format", "json", *extra]
        return subprocess.run(
            argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    side_by_side, one_at_a_time = detect(), detect("--rev", "HEAD")
    assert side_by_side.returncode in (0, 1), side_by_side.stderr
    assert one_at_a_time.returncode == side_by_side.returncode, one_at_a_time.stderr
    assert '"findings": [' in side_by_side.stdout
    assert side_by_side.stdout == one_at_a_time.stdout
