"""The forge contract, part 3: ``commit_files``, the bot's edits on a branch without a push."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.forge import BOT_AUTHOR, MergeMethod, PrState, Validation
from tests.forge.backends import BASE_FILES, BRANCH, FIX, STATE, Backend

NEW = {"apps/web/service.yaml": FIX["apps/web/service.yaml"], "README.md": None}


def _base(backend: Backend) -> str:
    sha = backend.branch_sha("main")
    assert sha is not None
    return sha


def test_commit_files_creates_the_branch_with_one_bot_commit(backend: Backend) -> None:
    base = _base(backend)
    sha = backend.forge.commit_files(BRANCH, base, NEW, "fix targetPort")
    assert backend.branch_sha(BRANCH) == sha
    assert backend.parents(sha) == (base,)
    expected = {**BASE_FILES, **FIX}
    del expected["README.md"]
    assert backend.files_at(sha) == expected
    assert backend.author(sha) == BOT_AUTHOR
    assert backend.branch_sha("main") == base
    backend.assert_clean()


def test_commit_files_twice_commits_once(backend: Backend) -> None:
    base = _base(backend)
    first = backend.forge.commit_files(BRANCH, base, NEW, "fix targetPort")
    assert backend.forge.commit_files(BRANCH, base, NEW, "fix targetPort") == first
    assert backend.forge.commit_files(BRANCH, base, {"README.md": None}, "again") == first
    assert backend.branch_sha(BRANCH) == first


def test_commit_files_adds_a_commit_on_top_of_its_branch(backend: Backend) -> None:
    base = _base(backend)
    first = backend.forge.commit_files(BRANCH, base, NEW, "fix targetPort")
    replicas = {"apps/web/deployment.yaml": "replicas: 3\nimage: web:1.0\nport: 8080\n"}
    second = backend.forge.commit_files(BRANCH, base, replicas, "scale")
    assert backend.parents(second) == (first,)
    assert (
        backend.files_at(second)["apps/web/deployment.yaml"] == replicas["apps/web/deployment.yaml"]
    )
    assert backend.files_at(second)["apps/web/service.yaml"] == FIX["apps/web/service.yaml"]


def test_commit_files_resets_a_branch_that_does_not_descend_from_the_new_base(
    backend: Backend,
) -> None:
    old_base = _base(backend)
    stale = backend.forge.commit_files(BRANCH, old_base, NEW, "fix targetPort")
    new_base = backend.push("main", {"apps/web/other.yaml": "kind: ConfigMap\n"})
    sha = backend.forge.commit_files(BRANCH, new_base, NEW, "fix targetPort")
    assert sha != stale
    assert backend.parents(sha) == (new_base,)
    assert backend.branch_sha(BRANCH) == sha
    assert "apps/web/other.yaml" in backend.files_at(sha)


def test_a_committed_branch_becomes_a_pr_that_merges(backend: Backend) -> None:
    sha = backend.forge.commit_files(BRANCH, _base(backend), NEW, "fix targetPort")
    pr = backend.forge.ensure_pr(BRANCH, "main", "Fix targetPort", "body", (), STATE)
    assert (pr.head_sha, pr.state) == (sha, PrState.OPEN)
    merged = backend.forge.merge(pr.number, sha, MergeMethod.SQUASH)
    assert backend.files_at(merged) == backend.files_at(sha)


@pytest.mark.parametrize(
    ("branch", "files", "message"),
    [
        ("main", NEW, "default branch"),
        ("bad..name", NEW, "not a valid branch name"),
        (BRANCH, {"../escape.yaml": "x"}, "not a relative file path"),
        (BRANCH, {"/abs.yaml": "x"}, "not a relative file path"),
        (BRANCH, {".git/config": "x"}, "not a relative file path"),
        (BRANCH, {}, "at least one file"),
        (BRANCH, {"README.md": BASE_FILES["README.md"]}, "nothing to commit"),
        (BRANCH, {"absent.yaml": None}, "nothing to commit"),
    ],
)
def test_commit_files_rejects_bad_input_and_changes_nothing(
    backend: Backend, branch: str, files: dict[str, str | None], message: str
) -> None:
    base = _base(backend)
    with pytest.raises(Validation, match=message):
        backend.forge.commit_files(branch, base, files, "m")
    assert backend.branches() == {"main"}
    assert backend.branch_sha("main") == base
    backend.assert_clean()


def test_commit_files_needs_a_known_base(backend: Backend) -> None:
    with pytest.raises(Validation, match="no commit found"):
        backend.forge.commit_files(BRANCH, "f" * 40, NEW, "m")
    assert backend.branches() == {"main"}
