"""A person ticked a box on the dashboard issue: act as the comment command would, answer there.

The ``issues`` webhook (action ``edited``) carries the body before and after the
edit. A tick is acted on only when every one of these holds:

- someone made the edit (a delivery may omit ``sender``) and it was not gitmedic:
  its own rewrite of the dashboard, clearing the boxes, is an edit too;
- the issue is gitmedic's dashboard: opened by gitmedic, and the body before the
  edit carries the dashboard's state marker;
- the box was rendered by gitmedic, unticked, and the edit ticked it
  (:func:`~gitmedic.bot.render.dashboard_controls.newly_ticked`, by marker, never
  by the words beside it), and the journal offers that box now
  (:meth:`DashboardDesk.offered`): a marker copied by hand names nothing more.

The boxes then run through :func:`gitmedic.bot.commands.dispatch.answer_requests`: the same
permission check (of the person who edited, not of the issue's author), the same
runners and the same refusal as ``/gitmedic retry|revert|hold`` commented on the
PR. The answer is a comment on the dashboard whose topic is the edit's digest, so
a delivery handled again after a crash finds it and acts no more; then the
dashboard is written again from the journal with every box cleared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from gitmedic.bot.commands.actions import BotActions
from gitmedic.bot.commands.dispatch import answer_requests, neutralise_mentions
from gitmedic.bot.render.dashboard import KIND, DashboardKeeper, DashboardView
from gitmedic.bot.render.dashboard_controls import Control, newly_ticked, offered
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.forge_markers import extract_state


@dataclass(frozen=True)
class DashboardEdit:
    """An ``issues`` ``edited`` delivery, as far as the dashboard cares."""

    number: int
    issue_author: str | None  # None: a deleted account
    sender: str | None  # None: GitHub's description lets a delivery omit it
    before: str | None  # None: the edit changed the title or labels, not the body
    after: str

    @property
    def digest(self) -> str:
        """Names this edit: its answer's topic and the issue state that clears its boxes."""
        return hashlib.sha256(self.after.encode()).hexdigest()[:16]


class DashboardDesk:
    """The dashboards of serve's apps: what their journals offer, and writing them again."""

    def __init__(
        self,
        dashboards: Sequence[tuple[Callable[[], DashboardView], DashboardKeeper]],
        lock: AbstractContextManager[None] | None = None,
    ) -> None:
        self.dashboards = list(dashboards)
        self.lock = lock or nullcontext()

    def offered(self) -> frozenset[Control]:
        with self.lock:
            return frozenset().union(*(offered(view().transactions) for view, _ in self.dashboards))

    def answered(self, edit: str) -> None:
        """Every dashboard written again from its journals, the boxes of ``edit`` cleared
        (a dashboard the apps share, once, with every app's section)."""
        with self.lock:
            views: dict[int, tuple[DashboardKeeper, list[DashboardView]]] = {}
            for view, keeper in self.dashboards:
                views.setdefault(id(keeper), (keeper, []))[1].append(view())
            for keeper, shown in views.values():
                keeper.update_all(shown, answered=edit)


def handle_edit(
    forge: Forge, actions: BotActions, desk: DashboardDesk, edit: DashboardEdit, bot_login: str
) -> str:
    """Act on the boxes an edit of the dashboard ticked; the result, for the delivery log."""
    if edit.sender is None:
        return "edit without a sender: boxes ignored"
    if edit.sender == bot_login:
        return "gitmedic's own edit"
    if edit.before is None:
        return "edit without a body change"
    if edit.issue_author != bot_login or (extract_state(edit.before) or {}).get("kind") != KIND:
        return f"#{edit.number} is not gitmedic's dashboard"
    ticks = newly_ticked(edit.before, edit.after)
    if not ticks:
        return "no dashboard box ticked"
    topic = f"dashboard:{edit.digest}"
    if any(c.topic == topic for c in forge.list_comments(edit.number)):
        return "this edit was answered"  # a delivery handled again after a crash
    now = desk.offered()
    acting = [c for c in ticks if c in now]
    gone = [c for c in ticks if c not in now]
    parts: list[str] = []
    if acting:
        asked = [(c.verb, c.pr) for c in acting]
        refused, reply = answer_requests(forge, actions, asked, edit.sender)
        topic = refused or topic
        parts.append(reply)
    if gone:
        parts.append(_not_offered(gone, edit.sender))
    forge.ensure_comment(edit.number, topic, "\n\n".join(parts))
    desk.answered(edit.digest)
    done = ", ".join(f"{c.verb} #{c.pr}" for c in acting) or "nothing"
    return f"dashboard boxes ticked by {edit.sender}: {done}"


def _not_offered(gone: Sequence[Control], sender: str) -> str:
    names = ", ".join(f"{c.verb} #{c.pr}" for c in gone)
    return neutralise_mentions(
        f"@{sender}, the dashboard does not offer {names} now (the PR moved on, or the box "
        "was not gitmedic's). Nothing was done for it.",
        sender,
    )
