"""The tracked branch's head is asked of git once per change of the refs, and every sim of
the process shares the answer: many apps of one repository fork git once per commit,
not at every step of every app's sim, and what git would answer is what is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.sim import engine
from gitmedic.sim.branch_head import BranchHeads
from gitmedic.sim.engine import GitSource, ManifestLoadError
from tests.manifests.helpers import commit_all, git, write

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: b}\n"


@pytest.fixture
def heads(monkeypatch: pytest.MonkeyPatch) -> BranchHeads:
    fresh = BranchHeads()
    monkeypatch.setattr(engine, "HEADS", fresh)
    return fresh


def repo_of(root: Path, branch: str = "main", apps: int = 3) -> tuple[Path, str]:
    root.mkdir()
    git(root, "init", "-q", "-b", branch)
    write(root, {f"apps/a{i}/cm.yaml": CONFIGMAP % f"a{i}" for i in range(apps)})
    return root, commit_all(root)


def test_many_sources_of_one_repository_ask_git_once_until_a_commit(
    tmp_path: Path, heads: BranchHeads
) -> None:
    repo, first = repo_of(tmp_path / "repo")
    sources = [GitSource(repo / "apps" / f"a{i}") for i in range(3)]
    for _ in range(5):
        assert [s.head() for s in sources] == [first] * 3
    assert heads.asked == 1
    write(repo, {"apps/a1/cm.yaml": CONFIGMAP % "moved"})
    second = commit_all(repo)
    assert [s.head() for s in sources] == [second] * 3
    assert heads.asked == 2


def test_a_reset_packed_refs_and_a_new_main_are_followed(
    tmp_path: Path, heads: BranchHeads
) -> None:
    repo, first = repo_of(tmp_path / "repo", branch="master")
    source = GitSource(repo / "apps" / "a0")
    assert source.head() == first
    write(repo, {"apps/a0/cm.yaml": CONFIGMAP % "two"})
    second = commit_all(repo)
    assert source.head() == second
    git(repo, "pack-refs", "--all")  # the loose ref goes: packed-refs answers alone
    assert source.head() == second
    git(repo, "update-ref", "refs/heads/master", first)  # a loose ref again, older
    assert source.head() == first
    git(repo, "branch", "main", second)  # main appears: it wins over master
    assert source.head() == second
    git(repo, "branch", "-D", "main")
    assert source.head() == first


def test_a_branch_that_does_not_exist_is_said_every_time_and_then_found(
    tmp_path: Path, heads: BranchHeads
) -> None:
    repo, first = repo_of(tmp_path / "repo")
    source = GitSource(repo / "apps" / "a0", branch="release")
    for _ in range(2):
        with pytest.raises(ManifestLoadError, match="no branch release to deploy"):
            source.head()
    git(repo, "branch", "release", first)
    assert source.head() == first


def test_a_symbolic_loose_ref_is_asked_every_time(tmp_path: Path, heads: BranchHeads) -> None:
    repo, first = repo_of(tmp_path / "repo", branch="trunk")
    git(repo, "symbolic-ref", "refs/heads/main", "refs/heads/trunk")
    source = GitSource(repo / "apps" / "a0")
    assert source.head() == source.head() == first
    assert heads.asked == 2
