"""GitHubForge against what GitHub does on a bad day: lagging refs, 0-s rate limits,
permanent 405s, expiring App tokens, lazy mergeability, null inputs.

Over real HTTP against the stand-in; the forge's sleeps are recorded, and its clock
(and the stand-in's) is a fake one the sleeps advance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from gitmedic.bot.forges.github import GitHubForge
from gitmedic.reconciler.forge import (
    MergeNotAllowed,
    NotMergeable,
    PrFilter,
    StatusState,
    Validation,
)
from tests.forge.backends import BRANCH, FIX, GitHubBackend, open_fix
from tests.forge.test_github_forge import _app_key, fault, requested

NOW = 1_800_000_000.0


class FakeTime:
    """One clock for the forge and the stand-in; the forge's sleeps advance it."""

    def __init__(self) -> None:
        self.now, self.sleeps = NOW, list[float]()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def gh(tmp_path: Path) -> GitHubBackend:
    return GitHubBackend(tmp_path)


def forge_of(gh: GitHubBackend, time: FakeTime, **options: Any) -> GitHubForge:
    gh.store.clock = time
    if "app_id" not in options:
        options["token"] = gh.TOKEN
    return GitHubForge(gh.store.full_name, base_url=gh.url, sleep=time.sleep, clock=time, **options)


# ----------------------------------------------------------------------------- lagging refs


def test_a_just_pushed_branch_that_404s_twice_still_gets_its_pr(gh: GitHubBackend) -> None:
    time = FakeTime()
    forge = forge_of(gh, time)
    gh.push(BRANCH, FIX)
    gh.store.lag.hide(BRANCH, 2)  # POST /pulls, then GET /git/ref: both miss it
    pr = forge.ensure_pr(BRANCH, "main", "Fix targetPort", "body")
    assert pr.branch == BRANCH and forge.list_prs() == (pr,)
    assert time.sleeps == [1.0]
    assert requested(gh, "POST", "/pulls") == 2


def test_a_branch_that_never_shows_is_push_it_first_after_bounded_waits(
    gh: GitHubBackend,
) -> None:
    time = FakeTime()
    with pytest.raises(Validation, match="head branch gitmedic/nowhere does not exist; push it"):
        forge_of(gh, time).ensure_pr("gitmedic/nowhere", "main", "t", "b")
    assert time.sleeps == [1.0, 2.0, 4.0]


def test_commit_files_on_a_branch_created_a_moment_ago_retries(gh: GitHubBackend) -> None:
    time = FakeTime()
    forge = forge_of(gh, time)
    base = gh.branch_sha("main")
    assert base is not None
    gh.store.lag.new_refs = 1  # every new ref misses its first read
    first = forge.commit_files(BRANCH, base, FIX, "fix")
    gh.store.lag.hide(BRANCH, 1)  # the branch looks missing: POST /git/refs says it exists
    second = forge.commit_files(BRANCH, base, {"apps/web/x.yaml": "x: 1\n"}, "more")
    assert gh.parents(second) == (first,)
    assert time.sleeps == [1.0]


# ----------------------------------------------------------------------------- rate limits


def test_retry_after_0_is_retried_not_permission_denied(gh: GitHubBackend) -> None:
    time = FakeTime()
    number = open_fix(gh)
    forge = forge_of(gh, time)
    fault(
        gh,
        "POST",
        f"/issues/{number}/labels",
        403,
        headers={"Retry-After": "0"},
        message="You have exceeded a secondary rate limit",
    )
    assert forge.add_labels(number, ["gitmedic/hold"]) == ("gitmedic", "gitmedic/hold")
    assert time.sleeps == [0.0]
    past = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 5)}
    fault(gh, "DELETE", "/git/refs/heads/", 403, headers=past, message="API rate limit exceeded")
    forge.close_pr(number)
    forge.delete_branch(BRANCH)  # a reset already past (our clock runs ahead): retried now
    assert gh.branch_sha(BRANCH) is None and time.sleeps == [0.0, 0.0]


def test_zero_second_waits_are_bounded(gh: GitHubBackend) -> None:
    time = FakeTime()
    fault(gh, "GET", "/pulls", 429, headers={"Retry-After": "0"}, times=100)
    from gitmedic.reconciler.forge import RateLimited

    with pytest.raises(RateLimited):
        forge_of(gh, time).list_prs()
    assert time.sleeps == [0.0] * 5


def test_the_primary_rate_limit_waits_for_its_reset(gh: GitHubBackend) -> None:
    time = FakeTime()
    forge = forge_of(gh, time)
    open_fix(gh)
    gh.store.rate.limit, gh.store.rate.used, gh.store.rate.reset = 3, 0, NOW + 30
    forge.get_pr(1)  # one request each
    forge.get_pr(1)
    forge.get_pr(1)
    assert gh.store.rate.used == 3
    assert forge.get_pr(1).number == 1  # refused with remaining 0: waits for the reset
    assert time.sleeps == [30.0]
    headers = requests.get(f"{gh.url}/repos/{gh.store.full_name}", timeout=10).headers
    assert headers["X-RateLimit-Remaining"] == "1" and headers["X-RateLimit-Limit"] == "3"


# ----------------------------------------------------------------------------- merges


def test_a_permanent_405_is_told_apart_from_a_transient_one(gh: GitHubBackend) -> None:
    time = FakeTime()
    forge = forge_of(gh, time)
    number = open_fix(gh)
    head = forge.get_pr(number).head_sha
    fault(gh, "PUT", "/merge", 405, message="Merge commits are not allowed on this repository.")
    with pytest.raises(MergeNotAllowed, match="not allowed on this repository"):
        forge.merge(number, head)
    fault(gh, "PUT", "/merge", 405, message='Required status check "ci" is expected.')
    with pytest.raises(NotMergeable) as caught:
        forge.merge(number, head)
    assert not isinstance(caught.value, MergeNotAllowed)
    assert time.sleeps == []


def test_mergeable_is_null_first_then_computed(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    gh.push(BRANCH, {"apps/web/x.yaml": "x: 2\n"})  # the head moved: computed anew
    url = f"{gh.url}/repos/{gh.store.full_name}/pulls/{number}"
    first, then = (requests.get(url, timeout=10).json() for _ in range(2))
    assert (first["mergeable"], first["mergeable_state"]) == (None, "unknown")
    assert (then["mergeable"], then["mergeable_state"]) == (True, "clean")
    head = then["head"]["sha"]
    gh.forge.set_status(head, "ci/lint", StatusState.FAILURE, "red")
    assert requests.get(url, timeout=10).json()["mergeable_state"] == "unstable"
    gh.store.required_contexts = ("ci/lint",)
    assert requests.get(url, timeout=10).json()["mergeable_state"] == "blocked"
    gh.store.required_contexts, gh.store.strict = (), True
    gh.forge.set_status(head, "ci/lint", StatusState.SUCCESS, "green")
    gh.push("main", {"README.md": "moved on\n"})
    moved = [requests.get(url, timeout=10).json()["mergeable_state"] for _ in range(2)]
    assert moved == ["unknown", "behind"]
    # the forge reads none of it to decide: a null mergeable changes nothing
    assert gh.forge.list_prs(PrFilter.OPEN)[0].number == number


# ----------------------------------------------------------------------------- tokens


def test_an_app_token_expiring_mid_run_is_refreshed(gh: GitHubBackend) -> None:
    time = FakeTime()
    private, public = _app_key()
    gh.store.app_id, gh.store.app_public_key = 7, public
    gh.store.tokens.add("ghs_placeholder_nobody_has")  # from now on a token is required
    forge = forge_of(gh, time, app_id=7, private_key=private)
    first = forge.ensure_issue("dashboard", "all quiet")
    token = forge.git_token()
    time.now += 3600  # the stand-in's hour is over; PyGithub's own clock does not know
    assert forge.ensure_issue("dashboard", "still quiet").number == first.number
    assert forge.git_token() != token
    assert gh.store.minted.expired(token) and not gh.store.minted.expired(forge.git_token())
    assert time.sleeps == []


def test_a_personal_token_refused_is_not_retried(gh: GitHubBackend) -> None:
    from gitmedic.reconciler.forge import PermissionDenied

    time = FakeTime()
    gh.store.tokens.add("ghp_" + "someone0else" * 3)
    with pytest.raises(PermissionDenied, match="Bad credentials"):
        forge_of(gh, time).list_prs()
    assert requested(gh, "GET", "/pulls") == 1 and time.sleeps == []


# ----------------------------------------------------------------------------- null inputs


def test_nullable_inputs_are_omitted_not_sent_as_null(gh: GitHubBackend) -> None:
    time = FakeTime()
    checks = forge_of(gh, time, checks=True)
    sha = gh.forge.get_pr(open_fix(gh)).head_sha
    checks.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating")
    run = next(iter(gh.store.checks.values()))
    assert run["details_url"] == "https://github.com/apps/test-pygithub"  # GitHub's default
    assert checks.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating")
    assert requested(gh, "PATCH", "/check-runs/") == 0  # the default URL is no change
    gh.forge.set_status(sha, "ci/lint", StatusState.SUCCESS, "ok")
    (status,) = gh.store.statuses
    assert status["target_url"] is None


# ----------------------------------------------------------------------------- races


def test_a_label_creation_race_is_retried(gh: GitHubBackend) -> None:
    time = FakeTime()
    number = open_fix(gh)
    lost = [{"resource": "Label", "code": "already_exists", "field": "name"}]
    fault(gh, "POST", f"/issues/{number}/labels", 422, message="Validation Failed", errors=lost)
    assert forge_of(gh, time).add_labels(number, ["gitmedic/new"]) == ("gitmedic", "gitmedic/new")
    assert time.sleeps == [1.0]
    fault(gh, "POST", f"/issues/{number}/labels", 422, message="Validation Failed", errors=lost)
    pr = forge_of(gh, time).ensure_pr(BRANCH, "main", "Fix targetPort", "- [ ] hold\n", ["x"])
    assert "x" in pr.labels and time.sleeps == [1.0, 1.0]


def test_a_pr_opened_meanwhile_is_found_not_duplicated(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    forge = forge_of(gh, FakeTime())
    raced = forge._create_pull(BRANCH, "main", "Fix again", "b")  # as if the lookup missed it
    assert raced["number"] == number and len(gh.store.pulls) == 1
    assert requested(gh, "POST", "/pulls") == 2  # GitHub refused the duplicate with 422
