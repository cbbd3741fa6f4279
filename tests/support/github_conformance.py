"""The stand-in held to GitHub's description: every exchange checked, a drift fails its test.

The stand-in's middleware builds an :class:`Exchange` per request and adds what
does not match GitHub's OpenAPI description (:mod:`.github_openapi`) to its store's
``violations``; the autouse fixture here fails the test during whose run any
store collected one, naming each mismatch. So a reply missing a field GitHub
documents as required, or a forge request with a ``null`` GitHub would refuse,
fails the test that sent or served it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.github_openapi import rest_description


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    query: dict[str, str]

    def request(self, sent: bytes) -> list[str]:
        body = _json(sent)
        if isinstance(body, _Unreadable):
            return [f"{self.method} {self.path}: the request body is not JSON"]
        return rest_description().check_request(self.method, self.path, self.query, body)

    def reply(self, status: int, sent: bytes) -> list[str]:
        body = _json(sent)
        if isinstance(body, _Unreadable):
            return [f"{self.method} {self.path} -> {status}: the reply is not JSON"]
        return rest_description().check_reply(self.method, self.path, status, body)


class _Unreadable:
    pass


def _json(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return _Unreadable()


@pytest.fixture(autouse=True)
def github_conformance() -> Iterator[None]:
    """Fail the test when a stand-in it used saw an exchange GitHub's description refuses."""
    before = len(_live())
    yield
    live = _live()
    made = live[before:]
    del live[before:]
    problems = [problem for store in made for problem in store.violations]
    if problems:
        shown = "\n".join(dict.fromkeys(problems))
        pytest.fail(f"the GitHub stand-in saw exchanges GitHub's description refuses:\n{shown}")


def _live() -> list[Any]:
    """The stores made so far; none when no test imported the stand-in (nothing to load)."""
    module = sys.modules.get("tests.support.github_store")
    return module.LIVE if module is not None else []
