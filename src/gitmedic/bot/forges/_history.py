"""Merge and revert commits for LocalForge, computed without a work tree.

A merge is ``git merge-tree --write-tree base head`` then ``commit-tree`` with the
base and head as parents (``--no-ff``), or the base alone (squash).

A revert is what ``git revert -m 1 M`` computes: the three-way merge of the base
tip B with M's first parent P, using M as the merge base. ``merge-tree`` of git
2.39 picks the merge base itself, so we hand it a throw-away commit R whose tree
is P's and whose only parent is M: the best common ancestor of B and R is then M
(M is an ancestor of B), and ``merge-tree B R`` is exactly the revert's tree. R is
a dangling object that ``git gc`` collects; no ref or work tree is touched.
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.forges import _git
from gitmedic.bot.forges._git import Identity
from gitmedic.reconciler.forge import Conflict, MergeMethod, NotMergeable, PullRequest, Validation


def merge_commit(
    repo: Path, pr: PullRequest, base_tip: str, method: MergeMethod, who: Identity
) -> str:
    """The merge (or squash) commit of ``pr`` onto ``base_tip``; no ref moves."""
    result = _git.merge_tree(repo, base_tip, pr.head_sha)
    if result.conflicts:
        raise NotMergeable(
            f"PR #{pr.number} conflicts with {pr.base} in: {', '.join(result.conflicts)}"
        )
    if method is MergeMethod.MERGE:
        message = f"Merge pull request #{pr.number} from {pr.branch}\n\n{pr.title}"
        return _git.commit_tree(repo, result.tree, (base_tip, pr.head_sha), message, who)
    if method is MergeMethod.SQUASH:
        message = f"{pr.title} (#{pr.number})"
        return _git.commit_tree(repo, result.tree, (base_tip,), message, who)
    raise Validation(
        f"merge method {method.value!r} is not enabled on the local forge (use merge or squash)"
    )


def revert_commit(repo: Path, pr: PullRequest, base_tip: str, who: Identity) -> str:
    """A commit on ``base_tip`` undoing merged ``pr``; Conflict or Validation if it can't."""
    assert pr.merge_sha is not None
    merged = pr.merge_sha
    if not _git.is_ancestor(repo, merged, base_tip):
        raise Conflict(f"PR #{pr.number}'s merge {merged[:12]} is no longer on {pr.base}")
    merge_parents = _git.parents(repo, merged)
    first_parent = merge_parents[0]
    helper = _git.commit_tree(
        repo, _git.tree_of(repo, first_parent), (merged,), "gitmedic revert helper", who
    )
    result = _git.merge_tree(repo, base_tip, helper)
    if result.conflicts:
        raise Conflict(
            f"reverting PR #{pr.number} conflicts with later changes on {pr.base} in: "
            + ", ".join(result.conflicts)
        )
    if result.tree == _git.tree_of(repo, base_tip):
        raise Validation(f"PR #{pr.number}'s changes are no longer on {pr.base}: nothing to revert")
    message = _revert_message(pr.title, merged, merge_parents)
    return _git.commit_tree(repo, result.tree, (base_tip,), message, who)


def _revert_message(title: str, merged: str, merge_parents: tuple[str, ...]) -> str:
    # git revert's own wording, so `git log` reads the same as after `git revert -m 1`.
    if len(merge_parents) == 1:
        return f'Revert "{title}"\n\nThis reverts commit {merged}.'
    return (
        f'Revert "{title}"\n\nThis reverts commit {merged}, reversing\n'
        f"changes made to {merge_parents[0]}."
    )
