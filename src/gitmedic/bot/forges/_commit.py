"""LocalForge's ``commit_files``: one bot commit on a branch, built with plumbing only.

The tree is built in a throw-away index (``GIT_INDEX_FILE`` in a temporary
directory) from the parent's tree, so no work tree and no real index is ever
touched, even when the branch is checked out somewhere; the branch then moves
with a compare-and-swap ``update-ref``, so a concurrent writer is noticed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from gitmedic.bot.forges import _git
from gitmedic.bot.forges._git import Identity
from gitmedic.reconciler.forge import (
    BOT_EMAIL,
    BOT_LOGIN,
    Conflict,
    Validation,
    check_file_paths,
)

AUTHOR = Identity(BOT_LOGIN, BOT_EMAIL)
ZERO_SHA = "0" * 40


def commit_files(
    repo: Path,
    branch: str,
    base_sha: str,
    files: Mapping[str, str | None],
    message: str,
    default_branch: str,
) -> str:
    """See :meth:`gitmedic.reconciler.forge.Forge.commit_files`."""
    check_branch(repo, branch, default_branch)
    check_file_paths(files)
    base = _git.resolve(repo, base_sha) if base_sha and not base_sha.startswith("-") else None
    if base is None:
        raise Validation(f"no commit found for base sha {base_sha!r}")
    head = _git.branch_sha(repo, branch)
    parent = head if head is not None and _git.is_ancestor(repo, base, head) else base
    links = _git.symlinks_in(repo, parent, files)
    if links:
        raise Validation(
            f"{', '.join(links)} is a symbolic link on {parent[:12]}: the bot does not "
            "edit or commit through links"
        )
    tree = _write_tree(repo, parent, files)
    if tree == _git.tree_of(repo, parent):
        if parent == head and head != base:
            return head  # already committed by an earlier call
        raise Validation(f"these files change nothing on {base[:12]}: nothing to commit")
    commit = _git.commit_tree(repo, tree, (parent,), message, AUTHOR)
    if not _git.update_ref(repo, f"refs/heads/{branch}", commit, head or _git.ZERO_OLD, message):
        raise Conflict(f"branch {branch} moved while gitmedic was committing to it; try again")
    return commit


def check_branch(repo: Path, branch: str, default_branch: str) -> None:
    if branch.startswith("-") or not _git.valid_branch_name(repo, branch):
        raise Validation(f"{branch!r} is not a valid branch name")
    if branch == default_branch:
        raise Validation(f"{branch} is the default branch; the bot commits only to PR branches")


def _write_tree(repo: Path, parent: str, files: Mapping[str, str | None]) -> str:
    with tempfile.TemporaryDirectory(prefix="gitmedic-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git.out_env(repo, ["read-tree", parent], env)
        lines = []
        for path, text in files.items():
            if text is None:  # mode 0 removes the entry (--force-remove wants a work tree)
                lines.append(f"0 {ZERO_SHA}\t{path}\n")
                continue
            blob = _git.run(repo, "hash-object", "-w", "--stdin", input=text).stdout.strip()
            lines.append(f"100644 {blob}\t{path}\n")
        _git.run(repo, "update-index", "--index-info", env=env, input="".join(lines))
        return _git.out_env(repo, ["write-tree"], env)
