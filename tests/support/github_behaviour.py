"""How api.github.com behaves beyond its shapes, for the stand-in to behave the same.

Each rule here is one GitHub documents (or shows every day) and the forge must
survive:

- **Text limits**: a PR body, issue body or comment over 65,536 characters is
  refused with 422 ("body is too long (maximum is 65536 characters)").
- **Pagination**: listings serve ``per_page`` items (default 30, at most 100) and a
  ``Link`` header with ``first``/``prev``/``next``/``last`` URLs.
- **Replication lag**: a ref created a moment ago can look missing for a few reads
  (``Lag``): ``GET /git/ref`` 404s and ``POST /pulls`` finds no such head.
- **Primary rate limit**: every reply counts down ``x-ratelimit-remaining``; at 0
  requests are refused with 403 and ``x-ratelimit-reset`` until the window resets.
- **Expiring installation tokens**: an App's token dies an hour after it was minted
  (by the stand-in's clock, which a test can move).
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request, Response

BODY_LIMIT = 65_536
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
TOKEN_LIFETIME = 3600.0


class TooLong(Exception):
    pass


def check_text(resource: str, body: dict[str, Any], key: str = "body") -> None:
    """GitHub's 422 for a text over the limit (as GitHub counts: characters)."""
    text = body.get(key)
    if isinstance(text, str) and len(text) > BODY_LIMIT:
        raise TooLong(resource)


def too_long_error(resource: str) -> dict[str, Any]:
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": resource,
                "code": "custom",
                "field": "body",
                "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
            }
        ],
        "documentation_url": "https://docs.github.com/rest",
    }


def page(
    request: Request, response: Response, items: Sequence[Any], per_page: int, number: int
) -> list[Any]:
    """One page of ``items``, with GitHub's ``Link`` header on ``response``."""
    size = max(1, min(per_page, MAX_PER_PAGE))
    last = max(1, -(-len(items) // size))
    wanted = {"prev": number - 1, "next": number + 1, "first": 1, "last": last}
    if number <= 1:  # as GitHub: no way back from the first page, none on from the last
        del wanted["prev"], wanted["first"]
    if number >= last:
        del wanted["next"], wanted["last"]
    links = [f'<{_with_page(request, n, size)}>; rel="{rel}"' for rel, n in wanted.items()]
    if links:
        response.headers["Link"] = ", ".join(links)
    return list(items[(number - 1) * size : number * size])


def _with_page(request: Request, number: int, size: int) -> str:
    query = dict(request.query_params)
    query.update(page=str(number), per_page=str(size))
    return f"{request.url.replace(query=urllib.parse.urlencode(query))}"


@dataclass
class Lag:
    """Refs that still look missing: branch name -> reads left before it shows."""

    new_refs: int = 0  # every ref created through the API starts with this many misses
    hidden: dict[str, int] = field(default_factory=dict)

    def hide(self, branch: str, reads: int) -> None:
        self.hidden[branch] = reads

    def created(self, ref: str) -> None:
        if self.new_refs:
            self.hidden[ref.removeprefix("refs/heads/")] = self.new_refs

    def missing(self, branch: str) -> bool:
        """Whether this read of ``branch`` misses it (and counts the read)."""
        left = self.hidden.get(branch, 0)
        if left <= 0:
            return False
        self.hidden[branch] = left - 1
        return True


@dataclass
class RateWindow:
    """The primary rate limit: ``limit`` requests per window of ``period`` seconds."""

    limit: int = 5000
    period: float = 3600.0
    clock: Callable[[], float] = time.time
    used: int = 0
    reset: float = 0.0

    def take(self) -> bool:
        """Count one request; ``False`` when the window has none left."""
        now = self.clock()
        if now >= self.reset:
            self.used, self.reset = 0, float(int(now + self.period))
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.limit - self.used, 0)),
            "X-RateLimit-Reset": str(int(self.reset)),
            "X-RateLimit-Used": str(self.used),
            "X-RateLimit-Resource": "core",
        }


@dataclass
class Tokens:
    """Installation tokens and when each expires (by ``clock``, or after ``max_uses``)."""

    clock: Callable[[], float] = time.time
    expiry: dict[str, float] = field(default_factory=dict)
    max_uses: int | None = None  # a token dies early (revoked, skewed clocks) after these
    uses: dict[str, int] = field(default_factory=dict)

    def mint(self, token: str) -> float:
        self.expiry[token] = self.clock() + TOKEN_LIFETIME
        return self.expiry[token]

    def expired(self, token: str) -> bool:
        if token in self.expiry and self.clock() >= self.expiry[token]:
            return True
        return self.max_uses is not None and self.uses.get(token, 0) >= self.max_uses

    def use(self, token: str) -> None:
        if token in self.expiry:
            self.uses[token] = self.uses.get(token, 0) + 1
