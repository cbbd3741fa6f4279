"""The history walk leaves out a fix that was merged and then exactly reverted."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.responder.undone import undone_commits
from gitmedic.reconciler.git import Git

APP = "apps/shop"


def _commit(git: Git, root: Path, text: str, message: str) -> str:
    (root / APP).mkdir(parents=True, exist_ok=True)
    (root / APP / "app.yaml").write_text(text)
    git.run("add", "-A")
    git.run("commit", "-q", "-m", message)
    return git.head()


def _merged_fix(git: Git, root: Path, text: str) -> tuple[str, str]:
    git.run("checkout", "-q", "-b", "fix")
    fix = _commit(git, root, text, "fix(shop): restore the image")
    git.run("checkout", "-q", "main")
    return fix, git.merge("fix", "Merge pull request #1 from fix")


def test_a_merged_fix_and_its_exact_revert_are_left_out_but_the_fault_is_not(
    tmp_path: Path,
) -> None:
    git = Git.init(tmp_path)
    _commit(git, tmp_path, "image: shop:1\n", "init")
    fault = _commit(git, tmp_path, "image: shop:2\ncommand: [serve]\n", "shop: 2 with its command")
    fix, merge = _merged_fix(git, tmp_path, "image: shop:1\ncommand: [serve]\n")
    revert = git.revert(merge)
    undone = undone_commits(git, APP)
    assert undone == {fix, merge, revert}
    assert fault not in undone
    walked = [c.sha for c in git.log(APP) if c.sha not in undone]
    assert walked[0] == fault  # the latest change that still counts is the fault's


def test_a_revert_of_an_older_commit_with_changes_since_skips_nothing(tmp_path: Path) -> None:
    git = Git.init(tmp_path)
    _commit(git, tmp_path, "a: 1\n", "init")
    older = _commit(git, tmp_path, "a: 2\n", "a to 2")
    (tmp_path / APP / "other.yaml").write_text("b: 1\n")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "add other")
    git.revert(older)
    assert undone_commits(git, APP) == frozenset()
    assert undone_commits(git, APP, rev=older) == frozenset()
