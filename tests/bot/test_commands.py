"""Comment commands: parsing per line, permissions, one reply per comment, acting only once."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.commands.dispatch import CommandCall, CommentEvent, handle_comment, parse_commands
from gitmedic.reconciler.forge import BOT_LOGIN
from tests.bot.fakes import FakeActions, Scene, scene


@pytest.fixture
def world(tmp_path: Path) -> Scene:
    return scene(tmp_path)


def comment(world: Scene, author: str, body: str, *, action: str = "created") -> CommentEvent:
    created = world.forge.comment_as(author, world.bot_pr, body)
    return CommentEvent(action, world.bot_pr, True, created.id, author, body)


def replies(world: Scene, number: int | None = None) -> list[str]:
    comments = world.forge.list_comments(number or world.bot_pr)
    return [c.body.split("\n", 1)[1] for c in comments if c.author == BOT_LOGIN]


@pytest.mark.parametrize(
    ("body", "calls"),
    [
        ("/gitmedic approve", [CommandCall("approve", "", 1)]),
        ("/GitMedic MERGE now please", [CommandCall("merge", "now please", 1)]),
        ("LGTM\n  /gitmedic hold  \nthanks", [CommandCall("hold", "", 2)]),
        ("/gitmedic", [CommandCall("", "", 1)]),
        (
            "/gitmedic retry\n/gitmedic explain",
            [CommandCall("retry", "", 1), CommandCall("explain", "", 2)],
        ),
        ("see /gitmedic approve", []),  # not at the start of a line
        ("> /gitmedic approve", []),  # a quote
        ("/gitmedicapprove", []),
        ("```\n/gitmedic merge\n```\n/gitmedic help", [CommandCall("help", "", 4)]),
        ("", []),
    ],
)
def test_parse_commands(body: str, calls: list[CommandCall]) -> None:
    assert list(parse_commands(body)) == calls


@pytest.mark.parametrize("user", ["alice", "maria", "wendy"])  # admin, maintain, write
def test_writers_may_act(world: Scene, user: str) -> None:
    actions = FakeActions()
    handle_comment(world.forge, actions, comment(world, user, "/gitmedic approve"))
    assert actions.calls == [f"approve #{world.bot_pr}"]
    assert replies(world) == [f"> /gitmedic approve\n\napprove done for #{world.bot_pr}."]


@pytest.mark.parametrize(
    ("user", "theirs"), [("trish", "triage"), ("rita", "read"), ("mallory", "none")]
)
def test_others_get_a_polite_refusal_and_nothing_is_done(
    world: Scene, user: str, theirs: str
) -> None:
    actions = FakeActions()
    handle_comment(world.forge, actions, comment(world, user, "/gitmedic merge"))
    assert actions.calls == []
    assert replies(world) == [
        f"> /gitmedic merge\n\nSorry @{user}, `/gitmedic merge` needs write, maintain or admin "
        f"permission on this repository, and yours is {theirs}. Nothing was done."
    ]


def test_readers_may_ask_for_help_and_explain(world: Scene) -> None:
    actions = FakeActions()
    handle_comment(
        world.forge, actions, comment(world, "rita", "/gitmedic explain\n/gitmedic help")
    )
    assert actions.calls == [f"explain #{world.bot_pr}"]
    (reply,) = replies(world)
    assert reply.startswith(f"> /gitmedic explain\n\nexplain done for #{world.bot_pr}.")
    assert "> /gitmedic help\n\ngitmedic understands these commands" in reply


def test_strangers_do_not_even_get_help(world: Scene) -> None:
    handle_comment(world.forge, FakeActions(), comment(world, "mallory", "/gitmedic help"))
    assert "needs read or higher permission" in replies(world)[0]


@pytest.mark.parametrize("body", ["/gitmedic deploy-to-prod", "/gitmedic"])
def test_unknown_commands_get_the_help_text(world: Scene, body: str) -> None:
    actions = FakeActions()
    handle_comment(world.forge, actions, comment(world, "wendy", body))
    assert actions.calls == []
    (reply,) = replies(world)
    assert ("Unknown command `/gitmedic deploy-to-prod`" in reply) is (body != "/gitmedic")
    assert "| `/gitmedic approve` |" in reply


def test_several_commands_run_in_order_with_one_reply_for_all(world: Scene) -> None:
    actions = FakeActions()
    body = "Looks right.\n/gitmedic hold\nactually\n/gitmedic unhold\n/gitmedic approve"
    event = comment(world, "wendy", body)
    topics = handle_comment(world.forge, actions, event)
    n = world.bot_pr
    assert actions.calls == [f"hold #{n}", f"unhold #{n}", f"approve #{n}"]
    assert topics == [f"command:{event.comment_id}"]
    (reply,) = replies(world)
    sections = [s for s in reply.split("\n\n") if s.startswith("> /gitmedic")]
    assert sections == ["> /gitmedic hold", "> /gitmedic unhold", "> /gitmedic approve"]


@pytest.mark.parametrize("action", ["edited", "deleted"])
def test_only_new_comments_act(world: Scene, action: str) -> None:
    actions = FakeActions()
    assert (
        handle_comment(
            world.forge, actions, comment(world, "wendy", "/gitmedic merge", action=action)
        )
        == []
    )
    assert actions.calls == []
    assert replies(world) == []


def test_the_bots_own_comments_are_ignored(world: Scene) -> None:
    actions = FakeActions()
    mine = world.forge.ensure_comment(world.bot_pr, "status", "/gitmedic merge")
    event = CommentEvent("created", world.bot_pr, True, mine.id, BOT_LOGIN, mine.body)
    assert handle_comment(world.forge, actions, event) == []
    quoted = CommentEvent("created", world.bot_pr, True, mine.id, "someone", mine.body)
    assert handle_comment(world.forge, actions, quoted) == []  # a bot body, by its marker
    assert actions.calls == []


def test_a_reprocessed_comment_does_not_act_twice(world: Scene) -> None:
    actions = FakeActions()
    event = comment(world, "wendy", "/gitmedic approve\n/gitmedic merge")
    handle_comment(world.forge, actions, event)
    assert handle_comment(world.forge, actions, event) == []
    assert len(actions.calls) == 2
    assert len(replies(world)) == 1


def test_refusals_from_the_actions_become_the_reply(world: Scene) -> None:
    actions = FakeActions(refuse={"revert": "PR #1 is not merged, so there is nothing to revert."})
    handle_comment(world.forge, actions, comment(world, "wendy", "/gitmedic revert"))
    assert replies(world) == [
        "> /gitmedic revert\n\nPR #1 is not merged, so there is nothing to revert."
    ]


def test_commands_on_an_issue_answer_that_they_need_a_pull_request(world: Scene) -> None:
    actions = FakeActions()
    created = world.forge.comment_as("wendy", world.issue, "/gitmedic approve")
    event = CommentEvent("created", world.issue, False, created.id, "wendy", created.body)
    handle_comment(world.forge, actions, event)
    assert actions.calls == []
    assert replies(world, world.issue) == [
        f"> /gitmedic approve\n\n`/gitmedic approve` works on pull requests; "
        f"#{world.issue} is an issue."
    ]
