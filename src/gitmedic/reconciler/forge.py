"""The forge protocol: where the bot meets people (pull requests, comments, statuses, issues).

Modelled on Renovate's ``Platform``: every verb that writes is idempotent, so a bot
that crashed mid-step simply calls it again. ``ensure_pr`` finds its PR again by the
deterministic branch name (``gitmedic/<incident>/<slug>``), ``ensure_comment`` by a
hidden topic marker, ``ensure_issue`` by its title plus the bot's hidden marker,
``set_status`` keeps one status per (sha, context), and ``merge`` / ``revert_pr``
return what they did the first time when called again. No database is needed to
know what the bot has done: the hidden state marker in each PR body (see
:mod:`gitmedic.reconciler.forge_markers`) carries the bot's state, and
``find_prs`` / ``list_prs`` return it parsed, so a restarted bot rebuilds its state
from the forge alone.

Implementations: ``gitmedic.bot.forges.local.LocalForge`` (PRs inside the git repo
itself, the embedded default and the test forge) and
``gitmedic.bot.forges.github.GitHubForge`` (PyGithub). Both are held to the same
contract suite (``tests/forge/test_contract*.py``). Failures are the typed
:class:`ForgeError` subclasses below, never a client library's exception.

Contract details every implementation follows (the contract suite checks them):

- PR and issue numbers share one sequence, as on GitHub; comments and labels take
  either kind of number.
- There is never more than one PR per head branch. ``ensure_pr`` on a branch whose
  PR is closed or merged, or was opened by a person, returns that PR unchanged; a
  new attempt needs a new branch.
- ``ensure_pr`` updates the body only when the state or the hash of the rendered
  body changed (a person ticking a checkbox is not overwritten by an identical
  re-render); it updates the title when it differs and adds missing labels (labels
  a person added are never removed by ``ensure_pr``).
- ``merge`` on a PR already merged at ``expected_head_sha`` returns its merge sha.
- ``revert_pr`` opens the revert PR on :func:`revert_branch_name` (GitHub's own
  naming) and returns the existing one when called again.
- Labels are reported sorted; removing an absent label and deleting an absent
  branch are no-ops.
- ``commit_files`` is how the bot puts its edits on a branch without a local push:
  one commit authored by :data:`BOT_AUTHOR` on top of the branch head when the
  branch descends from ``base_sha``, else on ``base_sha`` itself (the branch is
  created, or reset onto the new base). A call whose result is already the branch
  head returns that head and commits nothing. It never writes the default branch.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]

BOT_LOGIN = "gitmedic[bot]"
BOT_EMAIL = "gitmedic[bot]@users.noreply.github.com"
BOT_AUTHOR = f"{BOT_LOGIN} <{BOT_EMAIL}>"  # the author of every commit_files commit


# ----------------------------------------------------------------------------- enums


class PrState(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"


class PrFilter(enum.Enum):
    """Which PRs a listing returns; ``CLOSED`` includes merged ones, as on GitHub."""

    OPEN = "open"
    CLOSED = "closed"
    ALL = "all"

    def admits(self, state: PrState) -> bool:
        if self is PrFilter.ALL:
            return True
        return (state is PrState.OPEN) == (self is PrFilter.OPEN)


class IssueState(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class StatusState(enum.Enum):
    """GitHub's commit status states; a check run's conclusion maps onto these."""

    PENDING = "pending"
    SUCCESS = "success"
    FAILURE = "failure"
    ERROR = "error"


class MergeMethod(enum.Enum):
    MERGE = "merge"
    SQUASH = "squash"
    REBASE = "rebase"


class Permission(enum.IntEnum):
    """A user's repository permission, ordered: ``perm >= Permission.WRITE`` works."""

    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Permission:
        """GitHub's names (``pull`` and ``push`` are its legacy spellings)."""
        name = {"pull": "read", "push": "write"}.get(text.lower(), text.lower())
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"unknown permission {text!r}") from None


# ----------------------------------------------------------------------------- data


@dataclass(frozen=True)
class PullRequest:
    number: int
    branch: str
    base: str
    title: str
    body: str  # as stored on the forge, hidden markers included
    state: PrState
    head_sha: str
    merge_sha: str | None
    labels: tuple[str, ...]
    author: str
    url: str
    bot_state: JsonObject | None  # the parsed hidden state marker, if any

    def to_json(self) -> JsonObject:
        return {
            "number": self.number,
            "state": self.state.value,
            "branch": self.branch,
            "base": self.base,
            "title": self.title,
            "head_sha": self.head_sha,
            "merge_sha": self.merge_sha,
            "labels": list(self.labels),
            "author": self.author,
            "url": self.url,
            "bot_state": self.bot_state,
        }


@dataclass(frozen=True)
class Comment:
    id: int
    number: int  # the PR or issue it belongs to
    author: str
    body: str  # as stored, topic marker included
    topic: str | None  # parsed from the hidden topic marker of a bot comment


@dataclass(frozen=True)
class CommitStatus:
    """A commit status (or check run) on one sha; one per (sha, context)."""

    sha: str
    context: str
    state: StatusState
    description: str
    target_url: str | None

    def to_json(self) -> JsonObject:
        return {
            "context": self.context,
            "state": self.state.value,
            "description": self.description,
            "target_url": self.target_url,
        }


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    state: IssueState
    labels: tuple[str, ...]
    author: str
    url: str
    bot_state: JsonObject | None


# ----------------------------------------------------------------------------- errors


class ForgeError(Exception):
    """Any failure of a forge verb; the message says what and why, for people."""


class NotFound(ForgeError):
    """The PR, issue or branch does not exist (HTTP 404)."""


class Conflict(ForgeError):
    """The change cannot be applied as asked: e.g. a revert whose changes conflict."""


class HeadMoved(Conflict):
    """The PR's head is not the sha the caller checked (HTTP 409 on merge)."""


class NotMergeable(Conflict):
    """The PR is closed, conflicts with its base, or cannot be merged (HTTP 405)."""


class MergeNotAllowed(NotMergeable):
    """The repository forbids this merge method (a permanent 405): retrying cannot help."""


class Validation(ForgeError):
    """The request is invalid for the forge (HTTP 422): bad branch, nothing to revert."""


class PermissionDenied(ForgeError):
    """The bot lacks the permission for this verb (HTTP 403 without rate limiting)."""


class RateLimited(ForgeError):
    """Rate limited after the bounded waits; retry no sooner than ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServerError(ForgeError):
    """The forge failed (HTTP 5xx) after the bounded retries."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------------- protocol


def check_file_paths(files: Mapping[str, str | None]) -> None:
    """Validation unless every path is a plain relative file path inside the repo."""
    if not files:
        raise Validation("commit_files needs at least one file")
    for path in files:
        parts = path.split("/")
        if not path or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git":
            raise Validation(f"{path!r} is not a relative file path inside the repository")


def revert_branch_name(pr: PullRequest) -> str:
    """The head branch of ``pr``'s revert PR: GitHub's ``revert-<n>-<branch>``."""
    return f"revert-{pr.number}-{pr.branch}"


class Forge(Protocol):
    """The verbs the reconciler and the bot drive a forge through."""

    def default_branch(self) -> str: ...

    # pull requests
    def ensure_pr(
        self,
        branch: str,
        base: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> PullRequest:
        """The one PR of ``branch``, created or brought up to date (see module doc).

        ``body`` is the human part; the forge appends the hidden state marker for
        ``state`` and the body hash marker. Validation when the branch or base does
        not exist or the branch has no commits that its base lacks.
        """
        ...

    def get_pr(self, number: int) -> PullRequest: ...

    def find_pr(self, branch: str) -> PullRequest | None: ...

    def list_prs(self, which: PrFilter = PrFilter.OPEN) -> tuple[PullRequest, ...]:
        """PRs in ascending number order."""
        ...

    def find_prs(
        self, match: Mapping[str, object], which: PrFilter = PrFilter.ALL
    ) -> tuple[PullRequest, ...]:
        """PRs whose hidden state holds every key of ``match`` with an equal value."""
        ...

    def close_pr(self, number: int) -> PullRequest:
        """Close an open PR (idempotent); Validation for a merged one."""
        ...

    def merge(
        self, number: int, expected_head_sha: str, method: MergeMethod = MergeMethod.MERGE
    ) -> str:
        """Merge and return the merge commit's sha.

        HeadMoved when the head is not ``expected_head_sha``; NotMergeable when the
        PR is closed or conflicts with its base.
        """
        ...

    def revert_pr(self, number: int) -> PullRequest:
        """Open (or find again) the PR reverting merged PR ``number``.

        Validation when the PR is not merged or its changes are already undone;
        Conflict when the revert does not apply to the base cleanly (nothing is
        left behind: no branch, no PR).
        """
        ...

    def delete_branch(self, branch: str) -> None:
        """Delete a head branch (idempotent); Validation for the default branch."""
        ...

    def commit_files(
        self, branch: str, base_sha: str, files: Mapping[str, str | None], message: str
    ) -> str:
        """Set (text) or delete (``None``) ``files`` on ``branch`` in one commit; its sha.

        The parent is ``branch``'s head when the branch exists and descends from
        ``base_sha``, else ``base_sha`` (the branch is created or reset onto it).
        Idempotent: when the parent already has the resulting tree and is the
        branch's own commit, that head is returned and nothing is written.
        Deleting an absent file is a no-op. Validation for an unknown
        ``base_sha``, a bad branch name or path, the default branch, or files that
        change nothing on ``base_sha``.
        """
        ...

    # comments, statuses, labels
    def ensure_comment(self, number: int, topic: str, body: str) -> Comment:
        """The one bot comment of ``topic`` on PR/issue ``number``, updated in place."""
        ...

    def list_comments(self, number: int) -> tuple[Comment, ...]:
        """All comments (people's too), oldest first."""
        ...

    def set_status(
        self,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str | None = None,
    ) -> CommitStatus:
        """Set the one status of ``context`` on ``sha``; Validation for an unknown sha."""
        ...

    def get_statuses(self, sha: str) -> tuple[CommitStatus, ...]:
        """The latest status per context on ``sha``, sorted by context."""
        ...

    def add_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]: ...

    def remove_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]: ...

    # issues and people
    def ensure_issue(
        self,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> Issue:
        """The one open bot issue titled ``title`` (a closed one is reopened)."""
        ...

    def get_issue(self, number: int) -> Issue: ...

    def close_issue(self, number: int) -> Issue: ...

    def get_permission(self, user: str) -> Permission:
        """The user's repository permission; ``NONE`` for unknown users."""
        ...
