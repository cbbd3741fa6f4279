"""Comment commands against hostile comments: amplification, hidden commands, injected echoes.

On the shipped bot, 300 ``/gitmedic x`` lines from a user without permission made
300 replies; the command name was echoed raw (``@org/team`` pinged a team,
``<!--`` hid the rest of the reply); and commands inside an indented code block,
a mismatched fence or an HTML comment ran although GitHub shows them as code or
not at all.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gitmedic.bot.commands.dispatch import CommentEvent, handle_comment
from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import BOT_LOGIN
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.security.serve_proc import serve

SPAM = "\n".join(f"/gitmedic x{i}" for i in range(300))
HIDDEN = {
    "fenced": "```\n/gitmedic merge\n```",
    "indented code": "Look:\n\n    /gitmedic merge",
    "mismatched fence": "```\n~~~\n/gitmedic merge\n```",  # ~~~ does not close ```
    "unclosed fence": "~~~~\n/gitmedic merge",
    "html comment": "<!--\n/gitmedic merge\n-->",
    "inline html comment": "<!-- hi -->/gitmedic merge",
    "html block": "<details>\n/gitmedic merge\n</details>",
    "block quote": "> /gitmedic merge",
    "lazy block quote": "> said:\n/gitmedic merge",
    "list item": "- /gitmedic merge",
    "inline code": "`/gitmedic merge`",
    "code as the name": "/gitmedic `merge`",
    "emphasis": "/gitmedic *merge*",
    # Issue 27: GitHub shows these inside a collapsed element or a table's cell.
    "collapsed details": "<details><summary>notes</summary>\n\n/gitmedic merge\n\n</details>",
    "details opened inline": "see <details><summary>x</summary>\n\n/gitmedic merge\n\n</details>",
    "html div": "<div>\n\n/gitmedic merge\n\n</div>",
    "line after a table row": "| a | b |\n|---|---|\n| 1 | 2 |\n/gitmedic merge",
    "table cell": "| command |\n|---|\n| /gitmedic merge |",
}


@pytest.fixture
def world(tmp_path: Path) -> Scene:
    return scene(tmp_path)


def say(world: Scene, author: str, body: str, number: int | None = None) -> CommentEvent:
    target = number or world.bot_pr
    created = world.forge.comment_as(author, target, body)
    return CommentEvent("created", target, True, created.id, author, body)


def bot_replies(forge: LocalForge, number: int) -> list[str]:
    return [c.body for c in forge.list_comments(number) if c.author == BOT_LOGIN]


def test_three_hundred_lines_from_a_user_without_permission_get_one_reply(world: Scene) -> None:
    actions = FakeActions()
    for _ in range(3):  # and posting it again does not add replies either
        handle_comment(world.forge, actions, say(world, "mallory", SPAM))
    (reply,) = bot_replies(world.forge, world.bot_pr)
    assert actions.calls == []
    assert "Sorry @mallory" in reply and "/gitmedic x1" not in reply


def test_three_hundred_unknown_commands_from_a_writer_get_one_short_reply(world: Scene) -> None:
    handle_comment(world.forge, FakeActions(), say(world, "wendy", SPAM))
    (reply,) = bot_replies(world.forge, world.bot_pr)
    assert reply.count("Unknown command") == 1 and "299 more" in reply


def test_a_writer_s_many_commands_run_at_most_ten_times(world: Scene) -> None:
    actions = FakeActions()
    handle_comment(world.forge, actions, say(world, "wendy", "\n".join(["/gitmedic hold"] * 50)))
    assert len(actions.calls) == 10
    (reply,) = bot_replies(world.forge, world.bot_pr)
    assert "40 more were ignored" in reply


@pytest.mark.parametrize("body", HIDDEN.values(), ids=HIDDEN.keys())
def test_commands_github_shows_as_code_or_hides_do_not_run(world: Scene, body: str) -> None:
    actions = FakeActions()
    assert handle_comment(world.forge, actions, say(world, "wendy", body)) == []
    assert actions.calls == []
    assert bot_replies(world.forge, world.bot_pr) == []


@pytest.mark.parametrize(
    "body",
    [
        "<details><summary>why</summary>\n\nlong story\n\n</details>\n\n/gitmedic hold",
        "| a |\n|---|\n| 1 |\n\n/gitmedic hold",
        "Some <b>bold</b> words\n\n/gitmedic hold",
        "<img src=x>\n\n/gitmedic hold",
    ],
    ids=["after details", "after a table and a blank line", "after inline html", "after a void"],
)
def test_a_command_after_a_closed_element_or_a_table_still_runs(world: Scene, body: str) -> None:
    actions = FakeActions()
    handle_comment(world.forge, actions, say(world, "wendy", body))
    assert [call.split()[0] for call in actions.calls] == ["hold"]


@pytest.mark.parametrize(
    "name", ["@org/team", "<!--", "@wendy", "[x]", "a_b*c", "https://evil.example/@org/team"]
)
def test_an_unknown_command_name_is_never_echoed_raw(world: Scene, name: str) -> None:
    handle_comment(world.forge, FakeActions(), say(world, "maria", f"/gitmedic {name}"))
    (reply,) = bot_replies(world.forge, world.bot_pr)
    human = reply.split("\n", 1)[1]  # after the bot's own topic marker
    assert name not in human and "<!--" not in human and "@org" not in human
    assert "Unknown command" in human


def test_replies_mention_only_the_commenter(world: Scene) -> None:
    refusal = "ask @org/admins or @bob; <!-- hidden --> and @maria"
    actions = FakeActions(refuse={"revert": refusal})
    handle_comment(world.forge, actions, say(world, "maria", "/gitmedic revert"))
    (reply,) = bot_replies(world.forge, world.bot_pr)
    human = reply.split("\n", 1)[1]
    assert "@org/admins" not in human and "@bob" not in human and "<!--" not in human
    assert "@maria" in human  # the commenter may be addressed


@pytest.mark.integration
def test_serve_answers_a_signed_flood_once_and_ignores_hidden_commands(tmp_path: Path) -> None:
    world = scene(tmp_path)
    with serve(world.repo, tmp_path / "state") as served:
        flood = payloads.pr_comment(world.bot_pr, "mallory", SPAM, 501)
        assert served.post("issue_comment", flood, "d-flood").status_code == 202
        for i, body in enumerate(HIDDEN.values()):
            hidden = payloads.pr_comment(world.bot_pr, "maria", body, 600 + i)
            assert served.post("issue_comment", hidden, f"d-hidden-{i}").status_code == 202
        last = payloads.pr_comment(world.bot_pr, "maria", "/gitmedic help", 700)
        assert served.post("issue_comment", last, "d-help").status_code == 202
        forge = LocalForge(world.repo, create=False)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "gitmedic understands" in r for r in bot_replies(forge, world.bot_pr)
        ):
            time.sleep(0.2)  # the worker handles deliveries in order: help comes last
    replies = bot_replies(forge, world.bot_pr)
    assert len(replies) == 2, replies  # one refusal for the flood, one help; hidden: nothing
    assert "Sorry @mallory" in replies[0] and "gitmedic understands" in replies[1]
