"""Turning an edited working tree into a commit (the fault library's output)."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler import gitcmd

AUTHOR = {
    "GIT_AUTHOR_NAME": "gitmedic-sim",
    "GIT_AUTHOR_EMAIL": "sim@gitmedic.invalid",
    "GIT_COMMITTER_NAME": "gitmedic-sim",
    "GIT_COMMITTER_EMAIL": "sim@gitmedic.invalid",
}


def commit_all(repo: Path, message: str) -> str:
    """Commit every change under ``repo`` and return the new commit's SHA."""
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message, env=AUTHOR)
    return _git(repo, "rev-parse", "HEAD").strip()


def init_repo(repo: Path) -> str:
    _git(repo, "init", "-q", "-b", "main")
    return commit_all(repo, "baseline")


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = gitcmd.run(repo, args[0], *args[1:], env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout
