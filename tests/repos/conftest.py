"""The ``gitmedic`` command in a subprocess, as CI and users run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import Result

Run = Result  # the in-process runner's result: exit code, stdout, stderr


def gitmedic(*argv: str | Path, cwd: Path | None = None, timeout: float = 240) -> Run:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


HISTORY = {"playbook", "bisect"}  # the strategies that restore a value from Git history
# podinfo's chart lets every rollout of its one replica take the pod down (maxUnavailable:
# 1 in its template): a warning the app had before any fault, which no values fix clears
CHART_WARNING = "rollout-strategy-unsafe"


def fixed_from_history(run: Run, *, left: frozenset[str] = frozenset()) -> None:
    """One fix committed, restored from Git history (a playbook recipe or bisect, never an
    LLM guess). ``left``: what the app had before its fault and still has, so ``run --once``
    ends unhealthy on it (for a person), and on nothing else."""
    report = run.json()
    fixes = [
        t for i in report["incidents"] for t in i["transactions"] if t["status"] == "committed"
    ]
    assert len(fixes) == 1 and fixes[0]["strategy"] in HISTORY, run.out
    assert (run.rc, report["healthy"]) == ((1, False) if left else (0, True)), run.err[-3000:]


def detectors_at(path: Path, rev: str, namespace: str) -> set[str]:
    """The detectors that find something in the desired state of ``path`` at ``rev``."""
    found = gitmedic("detect", path, "--rev", rev, "--namespace", namespace, "--format", "json")
    assert found.rc in (0, 1), found.err
    return {f["detector"] for f in found.json()["findings"]}


def one_hunk(repo: Path, bad: str, file: str) -> bool:
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "-U0", bad, "main", "--", file],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return diff.count("\n@@ ") == 1
