"""Commits whose change a later revert took back: left out of the history walk.

A fix the bot merged, found to regress and reverted, leaves two commits (and
their merge commits) whose net effect on the app is nothing. Walking history for
"the latest change" or "the commit that introduced a finding" must not stop at
them: undoing the revert would re-propose exactly the fix that was just undone.
A revert counts only when it restored the app path exactly as it was before the
reverted commit (``git revert`` of a merge reverses its first-parent diff); then
every commit between that state and the revert is skipped, the merges included.
"""

from __future__ import annotations

import re

from gitmedic.reconciler.git import Git

REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40})", re.MULTILINE)


def undone_commits(git: Git, path: str, rev: str = "HEAD") -> frozenset[str]:
    """The commits reachable from ``rev`` that a later exact revert cancelled out."""
    out = git.run(
        "log", "--format=%H%x00%B%x00", "--grep=This reverts commit", rev, "--", path or "."
    ).stdout
    fields = out.split("\0")
    undone: set[str] = set()
    for sha, body in zip(fields[0::2], fields[1::2], strict=False):
        for reverted in REVERTS.findall(body):
            undone |= _span(git, path, sha.strip(), reverted)
    return frozenset(undone)


def _span(git: Git, path: str, revert: str, reverted: str) -> set[str]:
    before = f"{reverted}^1"
    if _tree(git, revert, path) != _tree(git, before, path) or not _tree(git, before, path):
        return set()
    listed = git.run("rev-list", f"{before}..{revert}", check=False)
    return set(listed.stdout.split()) if listed.returncode == 0 else set()


def _tree(git: Git, rev: str, path: str) -> str:
    proc = git.run("rev-parse", "--verify", "--quiet", f"{rev}:{path}", check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""
