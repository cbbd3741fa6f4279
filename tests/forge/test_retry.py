"""The retry policy on its own: which failures wait, for how long, and what they become."""

from __future__ import annotations

import pytest

from gitmedic.bot.forges._retry import Failure, RetryPolicy, describe, is_transient
from gitmedic.reconciler.forge import (
    Conflict,
    ForgeError,
    MergeNotAllowed,
    NotFound,
    NotMergeable,
    PermissionDenied,
    RateLimited,
    ServerError,
    Validation,
)
from gitmedic.reconciler.redact import REGISTRY

NOW = 1_800_000_000.0
POLICY = RetryPolicy(max_wait=60, server_retries=3, backoff=1)


def test_retry_after_is_waited_exactly() -> None:
    failure = Failure(403, "slow down", {"Retry-After": "7"})
    assert POLICY.next_wait(failure, NOW, 0, 0) == 7


def test_rate_limit_reset_is_waited_until() -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}
    assert POLICY.next_wait(Failure(429, "limited", headers), NOW, 0, 0) == 30
    assert POLICY.next_wait(Failure(403, "limited", headers), NOW + 40, 0, 0) == 0


def test_a_secondary_rate_limit_without_a_time_waits_a_minute() -> None:
    failure = Failure(403, "You have exceeded a secondary rate limit")
    assert POLICY.next_wait(failure, NOW, 0, 0) == 60
    with pytest.raises(RateLimited) as caught:
        POLICY.next_wait(failure, NOW, 1, 0)
    assert caught.value.retry_after == 60


def test_a_wait_past_the_bound_is_not_taken() -> None:
    with pytest.raises(RateLimited, match="retry in 90 s") as caught:
        POLICY.next_wait(Failure(429, "limited", {"Retry-After": "90"}), NOW, 0, 0)
    assert caught.value.retry_after == 90
    with pytest.raises(RateLimited):
        POLICY.next_wait(Failure(429, "limited", {"Retry-After": "20"}), NOW, 45, 0)


def test_server_errors_back_off_then_give_up() -> None:
    failure = Failure(502, "Bad Gateway")
    assert [POLICY.next_wait(failure, NOW, 0, n) for n in range(3)] == [1, 2, 4]
    with pytest.raises(ServerError, match="after 4 tries") as caught:
        POLICY.next_wait(failure, NOW, 7, 3)
    assert caught.value.status == 502
    with pytest.raises(ServerError):
        POLICY.next_wait(Failure(None, "ConnectionError: refused"), NOW, 59.5, 0)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, PermissionDenied),
        (403, PermissionDenied),
        (404, NotFound),
        (405, NotMergeable),
        (409, Conflict),
        (422, Validation),
        (418, ForgeError),
    ],
)
def test_other_failures_map_to_their_class_at_once(status: int, kind: type[ForgeError]) -> None:
    with pytest.raises(kind, match=f"HTTP {status}: refused") as caught:
        POLICY.next_wait(Failure(status, "refused"), NOW, 0, 0)
    assert type(caught.value) is kind


def test_messages_never_show_a_registered_secret() -> None:
    REGISTRY.add("s3cr3t-value-for-retry-test")
    text = describe(Failure(401, "token s3cr3t-value-for-retry-test and ghp_" + "a" * 36))
    assert "s3cr3t" not in text
    assert "ghp_" not in text


def test_a_wait_of_0_s_is_still_a_rate_limit_and_is_bounded() -> None:
    zero = Failure(403, "secondary rate limit", {"Retry-After": "0"})
    assert POLICY.rate_limit_wait(zero, NOW) == 0.0  # not None: GitHub asked to retry
    assert POLICY.next_wait(zero, NOW, 0, 0, rate_failures=4) == 0
    with pytest.raises(RateLimited):
        POLICY.next_wait(zero, NOW, 0, 0, rate_failures=5)


def test_a_lagging_ref_waits_then_is_the_validation_it_would_have_been() -> None:
    lag = Failure(None, "head branch x does not exist; push it first", lagging=True)
    assert [POLICY.next_wait(lag, NOW, 0, 0, lag_failures=n) for n in range(3)] == [1, 2, 4]
    with pytest.raises(Validation, match="push it first") as caught:
        POLICY.next_wait(lag, NOW, 7, 0, lag_failures=3)
    assert type(caught.value) is Validation
    assert not is_transient(lag)


def test_a_405_for_a_forbidden_merge_method_is_merge_not_allowed() -> None:
    forbidden = Failure(405, "Squash merges are not allowed on this repository.")
    with pytest.raises(MergeNotAllowed):
        POLICY.next_wait(forbidden, NOW, 0, 0)
    with pytest.raises(NotMergeable) as caught:
        POLICY.next_wait(Failure(405, "Pull Request is not mergeable"), NOW, 0, 0)
    assert type(caught.value) is NotMergeable
