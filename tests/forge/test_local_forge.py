"""LocalForge specifics: where it keeps things, work trees, bare repos, outside merges."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import (
    MergeMethod,
    NotFound,
    NotMergeable,
    PrFilter,
    PrState,
    ServerError,
    Validation,
)
from gitmedic.reconciler.forge_markers import render_body
from tests.forge.backends import BRANCH, FIX, STATE, LocalBackend, commit_files, git, make_repo


@pytest.fixture
def local(tmp_path: Path) -> LocalBackend:
    return LocalBackend(tmp_path)


def opened(local: LocalBackend) -> tuple[int, str]:
    head = local.push(BRANCH, FIX)
    return local.local.ensure_pr(BRANCH, "main", "Fix", "b", (), STATE).number, head


def test_metadata_lives_under_git_dir_in_wal_mode_and_refs_pin_heads(local: LocalBackend) -> None:
    number, head = opened(local)
    database = local.repo / ".git" / "gitmedic" / "forge.sqlite"
    with closing(sqlite3.connect(database)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT branch FROM prs").fetchall() == [(BRANCH,)]
    assert git(local.repo, "rev-parse", f"refs/gitmedic/pr/{number}") == head
    local.local.delete_branch(BRANCH)
    assert git(local.repo, "rev-parse", f"refs/gitmedic/pr/{number}") == head
    assert git(local.repo, "status", "--porcelain") == ""


def test_merge_fast_forwards_the_checked_out_main(local: LocalBackend) -> None:
    number, head = opened(local)
    merged = local.local.merge(number, head)
    assert git(local.repo, "rev-parse", "HEAD") == merged
    assert (local.repo / "apps/web/service.yaml").read_text() == FIX["apps/web/service.yaml"]
    assert git(local.repo, "status", "--porcelain") == ""


def test_merge_keeps_uncommitted_changes_to_other_files(local: LocalBackend) -> None:
    number, head = opened(local)
    (local.repo / "README.md").write_text("work in progress\n")
    merged = local.local.merge(number, head)
    assert git(local.repo, "rev-parse", "HEAD") == merged
    assert (local.repo / "README.md").read_text() == "work in progress\n"
    assert git(local.repo, "status", "--porcelain") == "M README.md"


def test_merge_refuses_to_overwrite_uncommitted_changes(local: LocalBackend) -> None:
    number, head = opened(local)
    before = git(local.repo, "rev-parse", "main")
    (local.repo / "apps/web/service.yaml").write_text("mine\n")
    with pytest.raises(NotMergeable, match="uncommitted changes"):
        local.local.merge(number, head)
    assert git(local.repo, "rev-parse", "main") == before
    assert (local.repo / "apps/web/service.yaml").read_text() == "mine\n"
    assert local.local.get_pr(number).state is PrState.OPEN


def test_bare_repository_merges_and_reverts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bare.git", bare=True)
    forge = LocalForge(repo)
    head = commit_files(repo, BRANCH, FIX, "main")
    number = forge.ensure_pr(BRANCH, "main", "Fix", "b").number
    merged = forge.merge(number, head)
    assert git(repo, "rev-parse", "main") == merged
    revert = forge.revert_pr(number)
    forge.merge(revert.number, revert.head_sha)
    assert git(repo, "rev-parse", "main^{tree}") == git(repo, "rev-parse", f"{merged}^1^{{tree}}")


def test_revert_matches_git_revert_m1(local: LocalBackend, tmp_path: Path) -> None:
    number, head = opened(local)
    merged = local.local.merge(number, head)
    local.push("main", {"apps/web/deployment.yaml": "replicas: 4\nimage: web:1.0\nport: 8080\n"})
    revert = local.local.revert_pr(number)
    scratch = tmp_path / "scratch"
    git(local.repo, "worktree", "add", "-q", "--detach", str(scratch), "main")
    git(scratch, "revert", "--no-edit", "-m", "1", merged)
    assert git(scratch, "rev-parse", "HEAD^{tree}") == git(
        local.repo, "rev-parse", f"{revert.head_sha}^{{tree}}"
    )
    assert git(local.repo, "log", "-1", "--format=%B", revert.head_sha).startswith(
        f'Revert "Fix"\n\nThis reverts commit {merged}, reversing\n'
    )


def test_rebase_merges_are_not_enabled(local: LocalBackend) -> None:
    number, head = opened(local)
    with pytest.raises(Validation, match="rebase"):
        local.local.merge(number, head, MergeMethod.REBASE)
    assert local.local.get_pr(number).state is PrState.OPEN


def test_a_merge_made_outside_the_forge_is_noticed(local: LocalBackend) -> None:
    number, head = opened(local)
    git(local.repo, "merge", "--no-ff", "-q", "-m", "merged by hand", BRANCH)
    by_hand = git(local.repo, "rev-parse", "HEAD")
    pr = local.local.get_pr(number)
    assert (pr.state, pr.merge_sha) == (PrState.MERGED, by_hand)
    assert local.local.merge(number, head) == by_hand  # a retried merge merges nothing
    assert git(local.repo, "rev-parse", "main") == by_hand


def test_a_persons_pr_is_never_edited_by_ensure_pr(local: LocalBackend) -> None:
    local.push("feature", FIX)
    fake = render_body("mine", {"incident": "inc-1"})
    pr = local.local.open_pr_as("bob", "feature", "main", "Feature", fake)
    assert pr.bot_state is None and pr.author == "bob"
    assert local.local.ensure_pr("feature", "main", "Bot title", "bot body", ["x"]) == pr
    assert local.local.find_prs({"incident": "inc-1"}) == ()


def test_opening_needs_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotFound, match="not inside a git repository"):
        LocalForge(tmp_path / "plain")
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(NotFound, match="no local forge yet"):
        LocalForge(repo / "apps" / "web", create=False)
    assert not (repo / ".git" / "gitmedic").exists()


def test_any_path_inside_the_repo_opens_the_same_forge(local: LocalBackend) -> None:
    number, _ = opened(local)
    inner = LocalForge(local.repo / "apps" / "web" / "service.yaml", create=False)
    assert inner.get_pr(number) == local.local.get_pr(number)


def test_a_broken_database_is_a_server_error(local: LocalBackend) -> None:
    number, _ = opened(local)
    (local.repo / ".git" / "gitmedic" / "forge.sqlite").write_bytes(b"not a database" * 512)
    with pytest.raises(ServerError, match="local forge database"):
        LocalForge(local.repo).get_pr(number)


_ENSURE = """
import sys
from gitmedic.bot.forges.local import LocalForge
pr = LocalForge(sys.argv[1]).ensure_pr(sys.argv[2], "main", "Fix", "body")
print(pr.number)
"""


@pytest.mark.integration
def test_two_processes_make_one_pr(local: LocalBackend) -> None:
    local.push(BRANCH, FIX)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ENSURE, str(local.repo), BRANCH],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    numbers = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert all(proc.returncode == 0 for proc in procs)
    assert len(numbers) == 1
    assert len(local.local.list_prs(PrFilter.ALL)) == 1
