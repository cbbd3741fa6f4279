"""``.ci/run``'s last step: the realkube tier runs after ``make test`` and the build,
unless they took so long (a loaded machine) that the tier would carry the run past
CI's 90 minutes, where nothing lands; then it is skipped, saying so, and the run
still passes. A stand-in ``make`` records the targets and a stand-in build script
returns at once, so only the script's own logic is under test; the latest start
(``REALKUBE_LATEST_START_S``) plays the clock."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]


def ci_run(tmp_path: Path, latest_start_s: int) -> tuple[subprocess.CompletedProcess[str], str]:
    """Runs a copy of .ci/run; returns it and the make targets it ran, in order."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", checkout / ".ci" / "run")
    (checkout / "tools" / "kube").mkdir(parents=True)
    (checkout / "tools" / "kube" / "build.sh").write_text("echo 'kube tools: present'\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    targets = tmp_path / "targets"
    make = bin_dir / "make"
    make.write_text(f'#!/bin/sh\necho "$@" >> {targets}\n')
    make.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "REALKUBE_LATEST_START_S": str(latest_start_s),
    }
    done = subprocess.run(
        ["bash", str(checkout / ".ci" / "run")],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    return done, targets.read_text() if targets.exists() else ""


@pytest.mark.integration
def test_the_tier_runs_after_make_test_and_the_build(tmp_path: Path) -> None:
    done, targets = ci_run(tmp_path, latest_start_s=3300)

    assert done.returncode == 0, done.stderr
    assert targets.split("\n") == ["test", "realkube-tier", ""]
    assert "kube tools: present" in done.stdout
    assert "SKIPPED" not in done.stderr


@pytest.mark.integration
def test_a_tier_that_would_start_too_late_is_skipped_saying_so_and_the_run_passes(
    tmp_path: Path,
) -> None:
    done, targets = ci_run(tmp_path, latest_start_s=0)

    assert done.returncode == 0, done.stderr
    assert targets.split("\n") == ["test", ""]
    assert "ci: the realkube tier is SKIPPED" in done.stderr
    assert "past the tier's latest start (0 s" in done.stderr
