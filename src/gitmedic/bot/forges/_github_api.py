"""What the GitHub forge's verb mixins use of :class:`~.github.GitHubForge`.

The mixins (:mod:`._github_pulls`, :mod:`._github_git`, :mod:`._github_items`) speak
JSON through these few methods, which ``GitHubForge`` implements with PyGithub's
requester; so PyGithub stays in one module and the mixins hold only GitHub's REST
semantics. :func:`verb` runs a public method under the forge's retry policy.
"""

from __future__ import annotations

import functools
import hashlib
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar

from gitmedic.bot.forges._retry import Failure, Lagging, typed_error

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", bound="ApiUser")


class ApiUser:
    owner: str
    name: str
    bot: str
    checks: bool
    graphql_revert: bool
    run_verb: Callable[[Callable[[], Any]], Any]
    request: Callable[..., Any]  # (verb, path, params=None, body=None) -> JSON
    pages: Callable[..., list[Any]]  # (path, params=None) -> every item
    attempt: Callable[[Callable[[], Any]], Any]  # result, or the Failure GitHub refused with
    graphql: Callable[[str, Mapping[str, Any]], dict[str, Any]]
    default_branch: Callable[[], str]

    def get_or_none(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """The JSON at ``path``, or ``None`` when GitHub says 404 (or 422 for a sha)."""
        result = self.attempt(lambda: self.request("GET", path, params))
        if isinstance(result, Failure):
            if result.status in (404, 422):
                return None
            raise_failure(result)
        return result

    def post_labels(self, number: int, labels: list[str]) -> Any:
        """Add ``labels`` to #``number`` (GitHub creates the missing ones); the labels now.

        Two callers creating the same new label race: the loser gets 422
        ``already_exists``. The label exists then, so the verb is retried.
        """
        path = f"/issues/{number}/labels"
        result = self.attempt(lambda: self.request("POST", path, body={"labels": labels}))
        if isinstance(result, Failure):
            if result.status == 422 and "already_exists" in result.message:
                raise Lagging(f"creating a label on #{number} raced: {result.message}")
            if result.status == 404:
                raise_failure(result, f"#{number} is neither a pull request nor an issue")
            raise_failure(result, f"labelling #{number}")
        return result


def verb(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """Run ``method`` as one verb: retried as a whole by the forge's policy."""

    def run(forge: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = forge.run_verb(lambda: method(forge, *args, **kwargs))
        return result

    functools.update_wrapper(run, method)
    return run


def raise_failure(failure: Failure, context: str = "") -> NoReturn:
    raise typed_error(failure, context)


def quote(segment: str) -> str:
    """A path segment for a URL (a branch keeps its slashes, a label does not)."""
    return urllib.parse.quote(segment, safe="/")


def quote_all(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def labels_of(raw: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(str(label["name"]) for label in raw.get("labels") or ()))


def blob_sha(text: str) -> str:
    """The git blob id of ``text``, as GitHub would compute it (no request needed)."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
