"""Atlantis-style scenarios: real webhook deliveries replayed in order against the app.

Each scenario sets a scene on a LocalForge repo, replays recorded GitHub payloads
(adapted to that repo by :mod:`tests.bot.payloads`) through the FastAPI app with
a fake BotActions, and writes a transcript of what the bot did for each delivery:
the HTTP answer, the delivery's result, the actions called and the replies it
wrote on the forge. The transcript is compared with a golden file under
``tests/fixtures/golden/scenarios/`` (GITMEDIC_UPDATE_GOLDEN=1 regenerates).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.forge import BOT_LOGIN, PrFilter
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.bot.service_kit import Bot, make_service, running
from tests.forge.backends import commit_files
from tests.support.golden import assert_golden

pytestmark = pytest.mark.integration


@dataclass
class Transcript:
    bot: Bot
    world: Scene
    actions: FakeActions
    names: dict[str, str] = field(default_factory=dict)  # sha -> placeholder
    lines: list[str] = field(default_factory=list)
    seen_comments: set[int] = field(default_factory=set)
    step: int = 0

    def name(self, sha: str, placeholder: str) -> str:
        self.names[sha] = placeholder
        return sha

    def replay(self, title: str, event: str, payload: Any, delivery: str | None = None) -> None:
        self.step += 1
        delivery = delivery or f"delivery-{self.step:02d}"
        called = len(self.actions.calls)
        response = self.bot.post(event, payload, delivery=delivery)
        self.bot.settle()
        stored = self.bot.service.store.result(delivery)
        self.lines += [
            f"## {self.step}. {title}",
            f"-> {event} [{delivery}]",
            f"<- HTTP {response.status_code} {response.json()['status']}",
            f"result: {': '.join(stored) if stored else '(not stored)'}",
            f"actions: {'; '.join(self.actions.calls[called:]) or '-'}",
            *self._new_replies(),
            "",
        ]

    def _new_replies(self) -> Iterator[str]:
        numbers = sorted({self.world.bot_pr, self.world.issue, *self.extra_numbers()})
        for number in numbers:
            for comment in self.world.forge.list_comments(number):
                if comment.author != BOT_LOGIN or comment.id in self.seen_comments:
                    continue
                self.seen_comments.add(comment.id)
                yield f"reply on #{number} ({comment.topic}):"
                yield from (f"    {line}" for line in comment.body.split("\n")[1:])

    def extra_numbers(self) -> list[int]:
        return [pr.number for pr in self.world.forge.list_prs(PrFilter.ALL)]

    def text(self) -> str:
        out = "\n".join(self.lines)
        for sha, placeholder in self.names.items():
            out = out.replace(sha, placeholder).replace(sha[:12], placeholder)
        return out


@pytest.fixture
def transcript(tmp_path: Path) -> Iterator[Transcript]:
    world = scene(tmp_path)
    actions = FakeActions()
    with running(make_service(world, actions, tmp_path / "state")) as bot:
        yield Transcript(bot, world, actions)


def test_commands_reviews_checks_and_pushes(transcript: Transcript) -> None:
    t, pr = transcript, transcript.world.bot_pr
    head = t.name(t.world.forge.get_pr(pr).head_sha, "<bot-pr-head>")
    t.replay("ping from a new hook", "ping", payloads.ping())
    t.replay("the app is suspended", "installation", payloads.installation())
    t.replay("gitmedic's PR opened", "pull_request", payloads.pr_event("opened", pr, BOT_LOGIN))
    comment = payloads.pr_comment(pr, "wendy", "Thanks!\n/gitmedic explain\n/GitMedic hold", 9001)
    t.replay("a writer asks for an explanation and holds", "issue_comment", comment)
    t.replay(
        "a stranger tries to merge",
        "issue_comment",
        payloads.pr_comment(pr, "mallory", "/gitmedic merge", 9002),
    )
    t.replay(
        "an edited comment never acts",
        "issue_comment",
        payloads.issue_comment("edited", t.world.issue, "wendy", "/gitmedic approve", 9003),
    )
    t.replay(
        "an unknown command",
        "issue_comment",
        payloads.pr_comment(pr, "maria", "/gitmedic ship-it", 9004),
    )
    t.replay("a maintainer approves by review", "pull_request_review", payloads.review(pr, "maria"))
    t.replay(
        "a comment-only review", "pull_request_review", payloads.review(pr, "maria", "commented")
    )
    t.replay("the gate's check suite completes", "check_suite", payloads.check_suite(head, pr))
    t.replay(
        "the detector workflow completes",
        "workflow_run",
        payloads.workflow_run("gitmedic-detect", pr),
    )
    t.replay("a check run fails", "check_run", payloads.check_run())
    t.replay("a tag is deleted", "push", payloads.tag_deleted())
    main = t.name(t.world.forge.get_pr(pr).head_sha, "<bot-pr-head>")
    t.replay("main moves", "push", payloads.push("refs/heads/main", main))
    body = t.world.forge.get_pr(pr).body
    ticked = body + "\n- [x] <!-- gitmedic:control retry --> Retry with a new attempt"
    t.replay(
        "a writer ticks the retry control",
        "pull_request",
        payloads.pr_edited(pr, BOT_LOGIN, "wendy", body, ticked),
    )
    t.replay("GitHub redelivers the comment", "issue_comment", comment, delivery="delivery-04")
    assert_golden("scenarios/commands_reviews_checks.md", t.text())


def test_human_merges_are_watched_and_revertible(transcript: Transcript) -> None:
    t, forge, repo = transcript, transcript.world.forge, transcript.world.repo
    commit_files(repo, "bob/scale-web", {"apps/web/deployment.yaml": "replicas: 5\n"}, "main")
    web = forge.open_pr_as("bob", "bob/scale-web", "main", "Scale web to 5", "more pods")
    web_sha = t.name(forge.merge(web.number, forge.get_pr(web.number).head_sha), "<web-merge>")
    commit_files(repo, "bob/readme", {"README.md": "docs\n"}, "main")
    docs = forge.open_pr_as("bob", "bob/readme", "main", "Docs", "words")
    docs_sha = t.name(forge.merge(docs.number, forge.get_pr(docs.number).head_sha), "<docs-merge>")
    t.replay(
        "a person merges a change to a watched app",
        "pull_request",
        payloads.pr_merged(web.number, "bob", "bob", web_sha, "bob/scale-web"),
    )
    t.replay(
        "a person merges a change outside the apps",
        "pull_request",
        payloads.pr_merged(docs.number, "bob", "bob", docs_sha, "bob/readme"),
    )
    t.replay(
        "gitmedic's own PR is merged",
        "pull_request",
        payloads.pr_merged(t.world.bot_pr, BOT_LOGIN, BOT_LOGIN, web_sha, "gitmedic/x"),
    )
    t.replay(
        "a writer asks to revert the person's PR",
        "issue_comment",
        payloads.pr_comment(web.number, "wendy", "/gitmedic revert", 9100),
    )
    t.replay(
        "a closed unmerged PR",
        "pull_request",
        payloads.pr_event("closed", docs.number, "bob"),
    )
    assert_golden("scenarios/human_merges.md", t.text())
