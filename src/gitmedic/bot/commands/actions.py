"""What the bot does when people (or GitHub events) ask: the seam between webhooks and the loop.

The webhook service and the comment commands never touch transactions
themselves; they call a :class:`BotActions`. ``gitmedic serve`` plugs in
:class:`gitmedic.bot.service.live_actions.LiveActions` (over the journal, sharing the
monitor's lock: each verb records what was asked, and the loop's next tick acts
on it); tests use a fake that records calls.

Each command verb returns the text of the bot's reply, and raises
:class:`ActionRefused` when it cannot be done now (the message becomes the reply:
"PR #4 is not merged, so there is nothing to revert"). Every verb is idempotent:
approving twice, holding a held PR, reverting a PR whose revert is open all
answer without doing anything twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gitmedic.bot.render.revert_asked import Asked
from gitmedic.reconciler.forge import Forge, PrState, PullRequest


class ActionRefused(Exception):
    """The action cannot be done now; the message, for people, is the reply."""


def bot_pr(forge: Forge, pr: int, verb: str) -> PullRequest:
    """PR ``pr`` if gitmedic opened it (it carries the bot's state), else ActionRefused."""
    found = forge.get_pr(pr)
    if found.bot_state is None:
        raise ActionRefused(f"`/gitmedic {verb}` works on gitmedic's PRs; #{pr} is not one.")
    return found


def open_bot_pr(forge: Forge, pr: int, verb: str) -> PullRequest:
    """As :func:`bot_pr`, and the PR must still be open."""
    found = bot_pr(forge, pr, verb)
    if found.state is not PrState.OPEN:
        raise ActionRefused(f"#{pr} is {found.state.value}; `/gitmedic {verb}` needs it open.")
    return found


@dataclass(frozen=True)
class DetectorRun:
    """A detector run reported by GitHub Actions (a check suite or a workflow run)."""

    source: str  # check_suite | check_run | workflow_run
    name: str
    head_sha: str
    branch: str | None  # None: GitHub names none (a fork's or a tag's run)
    conclusion: str | None  # success | failure | neutral | cancelled | ...; None: not concluded
    url: str
    pull_requests: tuple[int, ...] = ()


class BotActions(Protocol):
    # comment commands: each returns the reply text
    def approve(self, pr: int) -> str: ...
    def merge(self, pr: int) -> str: ...
    def revert(self, pr: int, asked: Asked | None = None) -> str:
        """Open a revert PR for ANY merged PR (the bot's or a person's), run as a transaction;
        ``asked``: who asked, where and why, for the revert PR's body."""
        ...

    def retry(self, pr: int) -> str: ...
    def hold(self, pr: int) -> str: ...
    def unhold(self, pr: int) -> str: ...
    def explain(self, pr: int) -> str: ...

    # events
    def watch_merge(self, pr: int, merge_sha: str) -> None:
        """A person merged ``pr`` touching a watched app: verify non-regression."""
        ...

    def main_moved(self, sha: str) -> None:
        """The default branch moved to ``sha`` (re-checkpoint transactions in flight)."""
        ...

    def detector_run(self, run: DetectorRun) -> None: ...
