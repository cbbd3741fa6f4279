"""Turning an edited working tree into a commit (the fault library's output)."""

from __future__ import annotations

import subprocess
from pathlib import Path

AUTHOR = ["-c", "user.name=gitmedic-sim", "-c", "user.email=sim@gitmedic.invalid"]


def commit_all(repo: Path, message: str) -> str:
    """Commit every change under ``repo`` and return the new commit's SHA."""
    _git(repo, "add", "-A")
    _git(repo, *AUTHOR, "commit", "-q", "--allow-empty", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


def init_repo(repo: Path) -> str:
    _git(repo, "init", "-q", "-b", "main")
    return commit_all(repo, "baseline")


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout
