"""How a forge adapter treats HTTP failures: wait and retry within a bound, or a typed error.

Pure policy, no client library: the GitHub adapter turns each failed request into a
:class:`Failure` and asks :meth:`RetryPolicy.next_wait` for the seconds to wait
before trying again; when no retry is left, the policy raises the typed
:class:`~gitmedic.reconciler.forge.ForgeError` instead.

- Rate limits (403 or 429): ``Retry-After`` seconds, else ``x-ratelimit-remaining:
  0`` with ``x-ratelimit-reset`` (epoch seconds) waits until the reset; a rate limit
  that names no time (a secondary limit) waits ``secondary_wait``, GitHub's advice
  of one minute. A wait that would take the verb's total past ``max_wait`` is not
  taken: :class:`RateLimited` with ``retry_after`` tells the caller when to come back.
  A wait of 0 s (``Retry-After: 0``, or a reset already past because our clock runs
  ahead) is still a rate limit: it is retried at once, at most ``rate_retries`` times.
- 5xx and lost connections: ``server_retries`` retries with doubling backoff (also
  within ``max_wait``), then :class:`ServerError`.
- A ref that GitHub's replicas have not seen yet (a branch pushed a moment ago looks
  missing: the adapter raises :class:`Lagging`): ``lag_retries`` retries with doubling
  ``lag_wait``, then the :class:`Validation` the lag would have been.
- Everything else maps once to its class: 404 NotFound, 405 NotMergeable (or
  :class:`MergeNotAllowed` when the repository forbids the merge method: no retry
  helps), 409 Conflict, 422 Validation, 401/403 PermissionDenied.

The adapter retries whole verbs, not single requests: every verb is idempotent, so
re-running it after a 5xx on a POST that did land finds the comment or PR it made
instead of making a second one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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
from gitmedic.reconciler.redact import redact_text

_BY_STATUS: dict[int, type[ForgeError]] = {
    401: PermissionDenied,
    403: PermissionDenied,
    404: NotFound,
    405: NotMergeable,
    409: Conflict,
    422: Validation,
}
# GitHub's 405s that no wait changes: the repository's settings forbid the method
# ("Merge commits are not allowed on this repository.", and squash/rebase alike).
_FORBIDDEN_METHOD = re.compile(r"\bnot allowed on this repository\b", re.IGNORECASE)


class Lagging(Exception):
    """A ref that should exist looks missing: GitHub may not have caught up yet."""


@dataclass(frozen=True)
class Failure:
    """One failed request: its HTTP status (``None``: no response at all)."""

    status: int | None
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    lagging: bool = False  # a just-pushed ref looked missing (see :class:`Lagging`)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


@dataclass(frozen=True)
class RetryPolicy:
    max_wait: float = 60.0  # seconds one verb may spend waiting, all retries together
    server_retries: int = 3
    backoff: float = 1.0  # the first 5xx wait; doubles each time
    secondary_wait: float = 60.0  # a rate limit that names no time
    rate_retries: int = 5  # rate limits one verb retries (bounds 0-s waits too)
    lag_retries: int = 3
    lag_wait: float = 1.0  # the first wait for a lagging ref; doubles each time

    def next_wait(
        self,
        failure: Failure,
        now: float,
        waited: float,
        server_failures: int,
        *,
        rate_failures: int = 0,
        lag_failures: int = 0,
    ) -> float:
        """Seconds to wait before the next try; raises the typed error when none is left.

        ``waited`` is what this verb already slept; ``server_failures``,
        ``rate_failures`` and ``lag_failures`` count the failures of each kind
        before this one.
        """
        if failure.lagging:
            return self._lag_wait(failure, waited, lag_failures)
        limit = self.rate_limit_wait(failure, now)
        if limit is not None:
            if waited + limit > self.max_wait or rate_failures >= self.rate_retries:
                raise RateLimited(
                    describe(failure, f"rate limited; retry in {limit:.0f} s"), retry_after=limit
                )
            return limit
        if is_transient(failure):
            wait = self.backoff * 2.0**server_failures
            if server_failures < self.server_retries and waited + wait <= self.max_wait:
                return wait
            raise ServerError(
                describe(failure, f"still failing after {server_failures + 1} tries"),
                failure.status,
            )
        raise typed_error(failure)

    def _lag_wait(self, failure: Failure, waited: float, lag_failures: int) -> float:
        wait = self.lag_wait * 2.0**lag_failures
        if lag_failures < self.lag_retries and waited + wait <= self.max_wait:
            return wait
        raise Validation(redact_text(failure.message))

    def rate_limit_wait(self, failure: Failure, now: float) -> float | None:
        """Seconds GitHub asks us to wait, or ``None`` when this is no rate limit."""
        if failure.status not in (403, 429):
            return None
        retry_after = _number(failure.header("retry-after"))
        if retry_after is not None:
            return max(retry_after, 0.0)
        reset = _number(failure.header("x-ratelimit-reset"))
        if failure.header("x-ratelimit-remaining") == "0" and reset is not None:
            return max(reset - now, 0.0)
        if failure.status == 429 or "rate limit" in failure.message.lower():
            return self.secondary_wait
        return None


def is_transient(failure: Failure) -> bool:
    """A 5xx or no response at all (a lagging ref has its own budget)."""
    return not failure.lagging and (failure.status is None or failure.status >= 500)


def typed_error(failure: Failure, context: str = "") -> ForgeError:
    """The ForgeError for a failure that is not retried."""
    if failure.status is not None and failure.status >= 500:
        return ServerError(describe(failure, context), failure.status)
    if failure.status == 405 and _FORBIDDEN_METHOD.search(failure.message):
        return MergeNotAllowed(describe(failure, context))
    kind = _BY_STATUS.get(failure.status or 0, ForgeError)
    return kind(describe(failure, context))


def describe(failure: Failure, context: str = "") -> str:
    """A message for people: the status and GitHub's message, secrets masked."""
    status = "no response" if failure.status is None else f"HTTP {failure.status}"
    text = f"GitHub: {status}: {failure.message}" + (f" ({context})" if context else "")
    return redact_text(text)


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None
