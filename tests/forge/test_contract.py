"""The forge contract, part 1: pull requests, merge and revert, for every backend.

Each test speaks only the Forge protocol plus the backend's scene-setting helpers,
so a new forge passes or fails exactly the same behaviours.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from gitmedic.reconciler.forge import (
    BOT_LOGIN,
    Conflict,
    Forge,
    HeadMoved,
    MergeMethod,
    NotFound,
    NotMergeable,
    PrFilter,
    PrState,
    Validation,
    revert_branch_name,
)
from gitmedic.reconciler.forge_markers import extract_state, strip_markers
from tests.forge.backends import BASE_FILES, BRANCH, FIX, STATE, Backend, open_fix


def test_ensure_pr_twice_makes_one_pr(backend: Backend) -> None:
    head = backend.push(BRANCH, FIX)
    first = backend.forge.ensure_pr(BRANCH, "main", "Fix targetPort", "body", ["gitmedic"], STATE)
    again = backend.forge.ensure_pr(BRANCH, "main", "Fix targetPort", "body", ["gitmedic"], STATE)
    assert again == first
    assert (first.branch, first.base, first.head_sha, first.state) == (
        BRANCH,
        "main",
        head,
        PrState.OPEN,
    )
    assert first.author == BOT_LOGIN
    assert first.labels == ("gitmedic",)
    assert first.bot_state == STATE
    assert strip_markers(first.body) == "body"
    assert [pr.number for pr in backend.forge.list_prs()] == [first.number]
    assert backend.forge.find_pr(BRANCH) == first


def test_ensure_pr_follows_new_commits_on_its_branch(backend: Backend) -> None:
    number = open_fix(backend)
    newer = backend.push(BRANCH, {"apps/web/deployment.yaml": "replicas: 3\n"})
    assert backend.forge.get_pr(number).head_sha == newer
    assert open_fix(backend) == number


def test_ensure_pr_updates_title_and_adds_labels_keeping_peoples_labels(
    backend: Backend,
) -> None:
    number = open_fix(backend)
    backend.forge.add_labels(number, ["needs-review"])
    pr = backend.forge.ensure_pr(BRANCH, "main", "Fix targetPort (v2)", "- [ ] hold\n", ["risk"])
    assert pr.title == "Fix targetPort (v2)"
    assert pr.labels == ("gitmedic", "needs-review", "risk")


def test_body_is_rewritten_only_when_state_or_rendering_changes(backend: Backend) -> None:
    number = open_fix(backend)
    ticked = backend.forge.get_pr(number).body.replace("- [ ] hold", "- [x] hold")
    backend.edit_body(number, ticked)

    open_fix(backend)  # same state, same rendering: the person's tick stays
    assert backend.forge.get_pr(number).body == ticked

    open_fix(backend, phase="gated")  # the state changed: the bot's body wins
    pr = backend.forge.get_pr(number)
    assert "- [ ] hold" in pr.body
    assert pr.bot_state == {**STATE, "phase": "gated"}

    backend.forge.ensure_pr(BRANCH, "main", "t", "new text", (), {**STATE, "phase": "gated"})
    assert strip_markers(backend.forge.get_pr(number).body) == "new text"


def test_restarted_bot_rebuilds_state_from_markers(backend: Backend) -> None:
    one = open_fix(backend)
    two = open_fix(backend, "gitmedic/inc-2/selector", incident="inc-2", tags=["a", "b"])
    backend.forge.close_pr(two)

    fresh = backend.reopen()
    assert [pr.number for pr in fresh.find_prs({"incident": "inc-1"})] == [one]
    found = fresh.find_prs({"incident": "inc-2", "tags": ("a", "b")}, PrFilter.CLOSED)
    assert [(pr.number, pr.bot_state) for pr in found] == [
        (two, {**STATE, "incident": "inc-2", "tags": ["a", "b"]})
    ]
    assert fresh.find_prs({"incident": "inc-2"}, PrFilter.OPEN) == ()
    assert [pr.bot_state for pr in fresh.list_prs(PrFilter.ALL)] == [
        extract_state(backend.forge.get_pr(n).body) for n in (one, two)
    ]


def test_concurrent_ensure_pr_makes_one_pr(backend: Backend) -> None:
    backend.push(BRANCH, FIX)

    def ensure(_: int) -> int:
        forge = backend.reopen()
        return forge.ensure_pr(BRANCH, "main", "Fix", "body", (), STATE).number

    with ThreadPoolExecutor(max_workers=6) as pool:
        numbers = set(pool.map(ensure, range(12)))
    assert len(numbers) == 1
    assert len(backend.forge.list_prs(PrFilter.ALL)) == 1


@pytest.mark.parametrize(
    ("branch", "base", "message"),
    [
        ("gitmedic/missing", "main", "does not exist"),
        (BRANCH, "no-such-base", "base branch no-such-base does not exist"),
        ("main", "main", "no commits between"),
    ],
)
def test_ensure_pr_rejects_bad_branches(
    backend: Backend, branch: str, base: str, message: str
) -> None:
    backend.push(BRANCH, FIX)
    with pytest.raises(Validation, match=message):
        backend.forge.ensure_pr(branch, base, "t", "b")
    assert backend.forge.list_prs(PrFilter.ALL) == ()


def test_ensure_pr_rejects_state_that_is_not_json(backend: Backend) -> None:
    backend.push(BRANCH, FIX)
    with pytest.raises(Validation, match="plain JSON"):
        backend.forge.ensure_pr(BRANCH, "main", "t", "b", (), {"when": object()})
    assert backend.forge.list_prs(PrFilter.ALL) == ()


def test_unknown_numbers_are_not_found(forge: Forge) -> None:
    for verb in (
        lambda: forge.get_pr(404),
        lambda: forge.close_pr(404),
        lambda: forge.merge(404, "0" * 40),
        lambda: forge.revert_pr(404),
        lambda: forge.ensure_comment(404, "gate", "x"),
        lambda: forge.list_comments(404),
        lambda: forge.add_labels(404, ["x"]),
        lambda: forge.get_issue(404),
    ):
        with pytest.raises(NotFound, match="404"):
            verb()
    assert forge.find_pr("gitmedic/nothing") is None


def test_close_is_idempotent_and_a_closed_pr_stays_closed(backend: Backend) -> None:
    number = open_fix(backend)
    closed = backend.forge.close_pr(number)
    assert closed.state is PrState.CLOSED
    assert backend.forge.close_pr(number) == closed
    assert open_fix(backend) == number  # never a second PR for the branch
    assert backend.forge.get_pr(number).state is PrState.CLOSED
    assert backend.forge.list_prs() == ()
    with pytest.raises(NotMergeable, match="closed"):
        backend.forge.merge(number, closed.head_sha)


def test_merge_writes_a_merge_commit_once(backend: Backend) -> None:
    number = open_fix(backend)
    pr = backend.forge.get_pr(number)
    base_before = backend.branch_sha("main")
    merged = backend.forge.merge(number, pr.head_sha, MergeMethod.MERGE)
    assert backend.branch_sha("main") == merged
    assert backend.parents(merged) == (base_before, pr.head_sha)
    assert backend.files_at(merged) == {**BASE_FILES, **FIX}
    after = backend.forge.get_pr(number)
    assert (after.state, after.merge_sha) == (PrState.MERGED, merged)
    assert backend.forge.merge(number, pr.head_sha) == merged  # called again: no new merge
    assert backend.branch_sha("main") == merged
    with pytest.raises(Validation, match="merged"):
        backend.forge.close_pr(number)
    backend.assert_clean()


def test_squash_merge_has_one_parent(backend: Backend) -> None:
    number = open_fix(backend)
    base_before = backend.branch_sha("main")
    merged = backend.forge.merge(number, backend.forge.get_pr(number).head_sha, MergeMethod.SQUASH)
    assert backend.parents(merged) == (base_before,)
    assert backend.files_at(merged) == {**BASE_FILES, **FIX}


def test_merge_with_a_stale_head_sha_is_refused(backend: Backend) -> None:
    number = open_fix(backend)
    seen = backend.forge.get_pr(number).head_sha
    moved = backend.push(BRANCH, {"apps/web/deployment.yaml": "replicas: 9\n"})
    base_before = backend.branch_sha("main")
    with pytest.raises(HeadMoved, match=seen[:12]):
        backend.forge.merge(number, seen)
    assert backend.branch_sha("main") == base_before
    assert backend.forge.get_pr(number).head_sha == moved
    assert backend.forge.get_pr(number).state is PrState.OPEN


def test_merge_that_conflicts_is_refused(backend: Backend) -> None:
    number = open_fix(backend)
    backend.push("main", {"apps/web/service.yaml": "port: 80\ntargetPort: 9090\n"})
    base_before = backend.branch_sha("main")
    with pytest.raises(NotMergeable, match=r"apps/web/service\.yaml"):
        backend.forge.merge(number, backend.forge.get_pr(number).head_sha)
    assert backend.branch_sha("main") == base_before
    backend.assert_clean()


def test_revert_is_the_exact_inverse_and_idempotent(backend: Backend) -> None:
    backend.push(BRANCH, {**FIX, "apps/web/new.yaml": "kind: ConfigMap\n", "README.md": None})
    number = backend.forge.ensure_pr(BRANCH, "main", "Fix", "b", (), STATE).number
    backend.forge.merge(number, backend.forge.get_pr(number).head_sha)
    later = backend.push("main", {"apps/web/deployment.yaml": "replicas: 5\n"})
    expected = backend.files_at(later)
    for name in (*FIX, "apps/web/new.yaml", "README.md"):
        expected.pop(name, None)
    expected.update({name: BASE_FILES[name] for name in (*FIX, "README.md")})

    revert = backend.forge.revert_pr(number)
    assert backend.forge.revert_pr(number) == revert
    assert (revert.branch, revert.base, revert.state) == (
        revert_branch_name(backend.forge.get_pr(number)),
        "main",
        PrState.OPEN,
    )
    assert revert.bot_state is not None and revert.bot_state["reverts"] == number
    assert backend.parents(revert.head_sha) == (later,)
    merged = backend.forge.merge(revert.number, revert.head_sha)
    assert backend.files_at(merged) == expected
    backend.assert_clean()


def test_revert_that_conflicts_leaves_nothing_behind(backend: Backend) -> None:
    number = open_fix(backend)
    backend.forge.merge(number, backend.forge.get_pr(number).head_sha)
    backend.push("main", {"apps/web/service.yaml": "port: 80\ntargetPort: 7070\n"})
    branches, prs = backend.branches(), backend.forge.list_prs(PrFilter.ALL)
    with pytest.raises(Conflict, match=r"apps/web/service\.yaml"):
        backend.forge.revert_pr(number)
    assert backend.branches() == branches
    assert backend.forge.list_prs(PrFilter.ALL) == prs
    backend.assert_clean()


def test_revert_needs_a_merged_pr_with_changes_left(backend: Backend) -> None:
    number = open_fix(backend)
    with pytest.raises(Validation, match="only merged PRs revert"):
        backend.forge.revert_pr(number)
    backend.forge.merge(number, backend.forge.get_pr(number).head_sha)
    backend.push("main", {"apps/web/service.yaml": BASE_FILES["apps/web/service.yaml"]})
    with pytest.raises(Validation, match="nothing to revert"):
        backend.forge.revert_pr(number)
    assert backend.branches() == {"main", BRANCH}


def test_delete_branch_is_idempotent_and_closes_its_open_pr(backend: Backend) -> None:
    number = open_fix(backend)
    backend.forge.delete_branch(BRANCH)
    backend.forge.delete_branch(BRANCH)
    assert BRANCH not in backend.branches()
    assert backend.forge.get_pr(number).state is PrState.CLOSED
    with pytest.raises(Validation, match="default branch"):
        backend.forge.delete_branch("main")
    assert backend.branch_sha("main") is not None
