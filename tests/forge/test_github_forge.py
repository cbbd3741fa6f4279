"""GitHubForge beyond the contract: auth, every error class, retries and their sleeps,
the GraphQL revert and its git-data fallback, native auto-merge, check runs, secrets.

All over real HTTP against the stand-in (tests/support), faults injected per request.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gitmedic.bot.forges._retry import RetryPolicy
from gitmedic.bot.forges.github import GitHubForge
from gitmedic.reconciler.forge import (
    BOT_AUTHOR,
    Conflict,
    HeadMoved,
    MergeMethod,
    NotFound,
    NotMergeable,
    PermissionDenied,
    PrState,
    RateLimited,
    ServerError,
    StatusState,
    Validation,
)
from tests.forge.backends import BASE_FILES, BRANCH, FIX, GitHubBackend, open_fix
from tests.support.github_standin import free_port
from tests.support.github_store import Fault

NOW = 1_800_000_000.0


@pytest.fixture
def gh(tmp_path: Path) -> GitHubBackend:
    return GitHubBackend(tmp_path)


def forge_of(gh: GitHubBackend, **options: Any) -> GitHubForge:
    return GitHubForge(
        gh.store.full_name,
        token=options.pop("token", gh.TOKEN),
        base_url=options.pop("base_url", gh.url),
        sleep=gh.sleeps.append,
        clock=lambda: NOW,
        **options,
    )


def fault(gh: GitHubBackend, method: str, path: str, status: int, **extra: Any) -> None:
    gh.store.faults.append(Fault(method, path, status, **extra))


def requested(gh: GitHubBackend, method: str, fragment: str) -> int:
    return sum(1 for m, path in gh.store.requests if m == method and fragment in path)


# ----------------------------------------------------------------------------- auth


def test_token_auth_is_sent_and_a_wrong_token_is_refused(gh: GitHubBackend) -> None:
    gh.store.tokens.add(gh.TOKEN)
    assert forge_of(gh).default_branch() == "main"
    wrong = "ghp_" + "w" * 36
    with pytest.raises(PermissionDenied, match="Bad credentials") as caught:
        forge_of(gh, token=wrong).get_pr(1)
    assert wrong not in str(caught.value)


@functools.cache
def _app_key(which: int = 0) -> tuple[str, str]:
    """An RSA key pair (PEM private, PEM public); cached: generating one is slow."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public.decode()


def test_app_auth_exchanges_its_jwt_for_an_installation_token(gh: GitHubBackend) -> None:
    private, public = _app_key()
    gh.store.app_id, gh.store.app_public_key = 7, public
    gh.store.tokens.add("ghs_placeholder_nobody_has")  # from now on a token is required
    forge = GitHubForge(gh.store.full_name, app_id=7, private_key=private, base_url=gh.url)
    issue = forge.ensure_issue("dashboard", "all quiet")
    assert forge.get_issue(issue.number) == issue
    assert requested(gh, "GET", "/repos/acme/manifests/installation") == 1
    assert requested(gh, "POST", f"/app/installations/{gh.store.installation_id}/access_tokens")
    assert len(gh.store.tokens) == 2  # the placeholder and the token minted for the App


def test_app_auth_with_a_wrong_key_or_no_installation_fails_clearly(gh: GitHubBackend) -> None:
    _, public = _app_key()
    other_private, _ = _app_key(1)
    gh.store.app_id, gh.store.app_public_key = 7, public
    with pytest.raises(PermissionDenied, match="JSON web token") as caught:
        GitHubForge(gh.store.full_name, app_id=7, private_key=other_private, base_url=gh.url)
    assert "PRIVATE KEY" not in str(caught.value)
    gh.store.app_public_key = _app_key(1)[1]  # the right key now, but no installation there
    with pytest.raises(NotFound, match="404"):
        GitHubForge("acme/elsewhere", app_id=7, private_key=other_private, base_url=gh.url)


def test_auth_needs_exactly_one_method(gh: GitHubBackend) -> None:
    with pytest.raises(Validation, match="token= or both"):
        GitHubForge(gh.store.full_name, base_url=gh.url)
    with pytest.raises(Validation, match="owner/name"):
        GitHubForge("no-slash", token=gh.TOKEN, base_url=gh.url)


# ----------------------------------------------------------------------------- errors


def test_404_409_405_and_422_map_to_their_classes(gh: GitHubBackend) -> None:
    forge = forge_of(gh)
    number = open_fix(gh)
    head = forge.get_pr(number).head_sha
    fault(gh, "GET", "/issues/comments", 404)  # unrelated path: never matches
    fault(gh, "GET", f"/issues/{number}/comments", 404)
    with pytest.raises(NotFound, match="HTTP 404"):
        forge.list_comments(number)
    fault(gh, "PUT", "/merge", 409)
    with pytest.raises(HeadMoved, match=head[:12]):
        forge.merge(number, head)
    fault(gh, "PUT", "/merge", 405, message="Merge commits are not allowed on this repository")
    with pytest.raises(NotMergeable, match="Merge commits are not allowed"):
        forge.merge(number, head)
    gh.push("gitmedic/other", {"apps/web/x.yaml": "x: 1\n"})
    fault(gh, "POST", "/pulls", 422, message="Validation Failed: draft PRs are not supported")
    with pytest.raises(Validation, match="draft PRs are not supported"):
        forge.ensure_pr("gitmedic/other", "main", "t", "b")
    assert forge.get_pr(number).state is PrState.OPEN
    assert gh.sleeps == []


def test_403_without_a_rate_limit_is_permission_denied(gh: GitHubBackend) -> None:
    fault(gh, "POST", "/issues", 403, message="Resource not accessible by integration")
    with pytest.raises(PermissionDenied, match="not accessible"):
        forge_of(gh).ensure_issue("dashboard", "x")
    assert gh.sleeps == []


def test_403_with_retry_after_waits_then_succeeds(gh: GitHubBackend) -> None:
    fault(gh, "GET", "/pulls", 403, headers={"Retry-After": "5"}, message="secondary rate limit")
    assert forge_of(gh).list_prs() == ()
    assert gh.sleeps == [5.0]


def test_429_with_ratelimit_reset_waits_until_the_reset(gh: GitHubBackend) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 12)}
    fault(gh, "GET", "/pulls", 429, headers=headers, times=2)
    assert forge_of(gh).list_prs() == ()
    assert gh.sleeps == [12.0, 12.0]


def test_a_rate_limit_past_the_bound_is_rate_limited_without_waiting(gh: GitHubBackend) -> None:
    fault(gh, "GET", "/pulls", 429, headers={"Retry-After": "120"})
    with pytest.raises(RateLimited) as caught:
        forge_of(gh).list_prs()
    assert caught.value.retry_after == 120
    assert gh.sleeps == []
    headers = {"Retry-After": "25"}
    fault(gh, "GET", "/pulls", 403, headers=headers, times=3, message="rate limit")
    with pytest.raises(RateLimited):
        forge_of(gh, policy=RetryPolicy(max_wait=60)).list_prs()
    assert gh.sleeps == [25.0, 25.0]  # a third wait would pass the 60 s bound


def test_500_then_success_retries_the_verb_once(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    fault(gh, "POST", f"/issues/{number}/comments", 500)
    forge = forge_of(gh)
    comment = forge.ensure_comment(number, "gate", "running")
    assert [c.id for c in forge.list_comments(number)] == [comment.id]
    assert gh.sleeps == [1.0]


def test_500_forever_gives_server_error_after_bounded_backoff(gh: GitHubBackend) -> None:
    fault(gh, "GET", "/pulls", 502, times=100, message="Bad Gateway")
    with pytest.raises(ServerError, match="Bad Gateway") as caught:
        forge_of(gh).list_prs()
    assert caught.value.status == 502
    assert gh.sleeps == [1.0, 2.0, 4.0]
    assert requested(gh, "GET", "/pulls") == 4


def test_no_server_at_all_is_a_server_error(gh: GitHubBackend) -> None:
    gone = f"http://127.0.0.1:{free_port()}"
    policy = RetryPolicy(server_retries=1)
    with pytest.raises(ServerError, match="no response") as caught:
        forge_of(gh, base_url=gone, policy=policy).list_prs()
    assert caught.value.status is None
    assert gh.sleeps == [1.0]


def test_the_token_never_shows_in_errors_or_logs(
    gh: GitHubBackend, caplog: pytest.LogCaptureFixture
) -> None:
    leak = f"token {gh.TOKEN} rejected"
    fault(gh, "GET", "/pulls", 500, message=leak)
    fault(gh, "GET", "/pulls", 401, message=leak)
    with caplog.at_level(logging.DEBUG), pytest.raises(PermissionDenied) as caught:
        forge_of(gh).list_prs()
    assert "rejected" in str(caught.value)
    assert gh.TOKEN not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert "rejected" in caplog.text and gh.TOKEN not in caplog.text


# ----------------------------------------------------------------------------- revert


def _merged_fix(gh: GitHubBackend) -> int:
    number = open_fix(gh)
    gh.forge.merge(number, gh.forge.get_pr(number).head_sha)
    gh.push("main", {"apps/web/deployment.yaml": "replicas: 5\n"})
    return number


def test_revert_goes_through_graphql(gh: GitHubBackend) -> None:
    number = _merged_fix(gh)
    revert = gh.forge.revert_pr(number)
    assert requested(gh, "POST", "/graphql") == 1
    assert requested(gh, "POST", "/git/commits") == 0
    assert revert.bot_state == {"reverts": number, "merge_sha": gh.forge.get_pr(number).merge_sha}
    assert (
        gh.files_at(revert.head_sha)["apps/web/service.yaml"] == BASE_FILES["apps/web/service.yaml"]
    )


def test_revert_falls_back_to_the_git_data_api_without_graphql(gh: GitHubBackend) -> None:
    gh.store.graphql_enabled = False
    number = _merged_fix(gh)
    revert = gh.forge.revert_pr(number)
    assert requested(gh, "POST", "/git/commits") == 1
    assert gh.author(revert.head_sha) == BOT_AUTHOR
    assert gh.parents(revert.head_sha) == (gh.branch_sha("main"),)
    files = gh.files_at(revert.head_sha)
    assert files["apps/web/service.yaml"] == BASE_FILES["apps/web/service.yaml"]
    assert files["apps/web/deployment.yaml"] == "replicas: 5\n"
    assert gh.forge.revert_pr(number) == revert
    assert revert.bot_state is not None and revert.bot_state["reverts"] == number


def test_a_refused_graphql_revert_falls_back_and_reuses_a_leftover_branch(
    gh: GitHubBackend,
) -> None:
    number = _merged_fix(gh)
    leftover = gh.push(f"revert-{number}-{BRANCH}", {"junk.txt": "half-done\n"})
    revert = gh.forge.revert_pr(number)  # GraphQL refuses: the branch exists
    assert revert.head_sha != leftover
    assert "junk.txt" not in gh.files_at(revert.head_sha)
    assert (
        gh.files_at(revert.head_sha)["apps/web/service.yaml"] == BASE_FILES["apps/web/service.yaml"]
    )


def test_a_conflicting_revert_without_graphql_leaves_nothing(gh: GitHubBackend) -> None:
    gh.store.graphql_enabled = False
    number = open_fix(gh)
    gh.forge.merge(number, gh.forge.get_pr(number).head_sha)
    gh.push("main", {"apps/web/service.yaml": "port: 80\ntargetPort: 7070\n"})
    with pytest.raises(Conflict, match=r"apps/web/service\.yaml"):
        gh.forge.revert_pr(number)
    assert gh.branches() == {"main", BRANCH}
    assert requested(gh, "POST", "/git/") == 0


# ----------------------------------------------------------------------------- extras


def test_enable_auto_merge_is_idempotent_and_respects_the_repository(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    assert gh.forge.enable_auto_merge(number, MergeMethod.SQUASH) is True
    assert gh.store.auto_merge == {number: "squash"}
    assert gh.forge.enable_auto_merge(number, MergeMethod.SQUASH) is True
    assert requested(gh, "POST", "/graphql") == 1
    gh.forge.close_pr(number)
    with pytest.raises(Validation, match="open PR"):
        gh.forge.enable_auto_merge(number)
    gh.store.allow_auto_merge = False
    assert forge_of(gh).enable_auto_merge(number) is False
    assert requested(gh, "POST", "/graphql") == 1


def test_statuses_as_check_runs_are_updated_in_place(gh: GitHubBackend) -> None:
    forge = forge_of(gh, checks=True)
    sha = gh.forge.get_pr(open_fix(gh)).head_sha
    first = forge.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating")
    assert forge.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating") == first
    forge.set_status(sha, "gitmedic/gate", StatusState.ERROR, "cluster unreachable", "https://x")
    assert len(gh.store.checks) == 1
    run = next(iter(gh.store.checks.values()))
    assert (run["status"], run["conclusion"], run["head_sha"]) == ("completed", "cancelled", sha)
    gh.forge.set_status(sha, "ci/lint", StatusState.SUCCESS, "ok")
    assert [(s.context, s.state) for s in forge.get_statuses(sha)] == [
        ("ci/lint", StatusState.SUCCESS),
        ("gitmedic/gate", StatusState.ERROR),
    ]


def test_merge_conflict_names_the_files_changed_on_both_sides(gh: GitHubBackend) -> None:
    gh.push(BRANCH, {**FIX, "apps/web/only-here.yaml": "x: 1\n"})
    number = gh.forge.ensure_pr(BRANCH, "main", "t", "b").number
    gh.push("main", {"apps/web/service.yaml": "port: 81\n", "README.md": "changed\n"})
    with pytest.raises(NotMergeable) as caught:
        gh.forge.merge(number, gh.forge.get_pr(number).head_sha)
    assert str(caught.value).endswith("changed on both sides: apps/web/service.yaml")
