"""A box ticked on the dashboard, delivered as GitHub's ``issues`` webhook through the real app."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitmedic.bot.render.dashboard import DashboardKeeper, DashboardView
from gitmedic.bot.service.dashboard_desk import DashboardDesk
from gitmedic.bot.service.settings import git_changed_files
from gitmedic.bot.service.webhook.handlers import Deps
from gitmedic.bot.service.webhook.service import Service, ServiceConfig
from gitmedic.reconciler.forge import BOT_LOGIN
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.bot.service_kit import SECRET, Bot, running
from tests.bot.test_dashboard import journal_with_history

pytestmark = pytest.mark.integration

RETRY_4 = "- [ ] <!-- gitmedic:dashboard retry 4 -->"


@dataclass
class World:
    bot: Bot
    scene: Scene
    actions: FakeActions
    number: int

    def tick(self, box: str, editor: str, delivery: str) -> str:
        """``editor`` ticks ``box`` on the dashboard; the delivery's stored result."""
        forge = self.scene.forge
        before = forge.get_issue(self.number).body
        after = before.replace(box, box.replace("[ ]", "[x]", 1))
        assert after != before
        forge.edit_issue_body(self.number, after)
        payload = payloads.issue_edited(self.number, BOT_LOGIN, editor, before, after)
        assert self.bot.post("issues", payload, delivery=delivery).status_code == 202
        self.bot.settle()
        return ": ".join(self.bot.service.store.result(delivery) or ())

    def replies(self) -> list[str]:
        comments = self.scene.forge.list_comments(self.number)
        return [c.body for c in comments if c.author == BOT_LOGIN]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    world = scene(tmp_path)
    journal = journal_with_history(tmp_path / "journal.sqlite")
    keeper = DashboardKeeper(world.forge)

    def view() -> DashboardView:
        return DashboardView(tuple(journal.transactions()))

    keeper.update(view())
    assert keeper.issue is not None
    actions = FakeActions()
    desk = DashboardDesk([(view, keeper)])
    deps = Deps(world.forge, actions, git_changed_files(world.repo), ("apps/web",), dashboard=desk)
    service = Service(ServiceConfig(SECRET, tmp_path / "state"), deps)
    with running(service) as bot:
        yield World(bot, world, actions, keeper.issue.number)


def test_a_writers_tick_runs_the_command_answers_and_clears_the_box(world: World) -> None:
    result = world.tick(RETRY_4, "wendy", "d-1")
    assert result == "done: dashboard boxes ticked by wendy: retry #4"
    assert world.actions.calls == ["retry #4"]
    (reply,) = world.replies()
    assert "> /gitmedic retry on #4\n\nretry done for #4." in reply
    body = world.scene.forge.get_issue(world.number).body
    assert "- [x]" not in body and RETRY_4 in body
    # gitmedic's own rewrite comes back as an edit too: it acts on nothing.
    before = body.replace(RETRY_4, RETRY_4.replace("[ ]", "[x]"))
    own = payloads.issue_edited(world.number, BOT_LOGIN, BOT_LOGIN, before, body)
    world.bot.post("issues", own, delivery="d-2")
    world.bot.settle()
    assert world.bot.service.store.result("d-2") == ("done", "gitmedic's own edit")
    assert world.actions.calls == ["retry #4"]


def test_a_reader_is_refused_as_a_command_would_refuse_them(world: World) -> None:
    result = world.tick(RETRY_4, "rita", "d-1")
    assert result == "done: dashboard boxes ticked by rita: retry #4"
    assert world.actions.calls == []
    (reply,) = world.replies()
    assert "Sorry @rita, `/gitmedic retry` needs write, maintain or admin permission" in reply
    assert "- [x]" not in world.scene.forge.get_issue(world.number).body
