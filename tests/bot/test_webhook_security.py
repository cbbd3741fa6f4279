"""The webhook endpoint refuses what it must, and acts on nothing it refused."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from gitmedic.bot.service.webhook.signature import sign, verify
from gitmedic.reconciler.forge import BOT_LOGIN
from gitmedic.reconciler.transaction.journal_store import JournalUnavailable
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.bot.service_kit import SECRET, Bot, make_service, running


@pytest.fixture
def world(tmp_path: Path) -> Scene:
    return scene(tmp_path)


@pytest.fixture
def actions() -> FakeActions:
    return FakeActions()


@pytest.fixture
def bot(world: Scene, actions: FakeActions, tmp_path: Path) -> Iterator[Bot]:
    with running(make_service(world, actions, tmp_path / "state", max_body_bytes=64_000)) as bot:
        yield bot


def approve(world: Scene, user: str = "wendy", comment_id: int = 9001) -> dict[str, object]:
    return payloads.pr_comment(world.bot_pr, user, "/gitmedic approve", comment_id)


def assert_nothing_done(bot: Bot, world: Scene, actions: FakeActions) -> None:
    bot.settle()
    assert actions.calls == []
    assert [c for c in world.forge.list_comments(world.bot_pr) if c.author == BOT_LOGIN] == []


def test_a_signed_delivery_is_queued_and_acted_on(
    bot: Bot, world: Scene, actions: FakeActions
) -> None:
    response = bot.post("issue_comment", approve(world))
    assert (response.status_code, response.json()) == (202, {"status": "queued"})
    bot.settle()
    assert actions.calls == [f"approve #{world.bot_pr}"]


@pytest.mark.parametrize(
    ("how", "kwargs"),
    [
        ("missing", {"signature": ""}),
        ("forged", {"signature": "sha256=" + "0" * 64}),
        ("not sha256", {"signature": "sha1=" + "0" * 40}),
        ("other secret", {"secret": "an-old-rotated-secret"}),
    ],
)
def test_bad_signatures_are_401(
    bot: Bot, world: Scene, actions: FakeActions, how: str, kwargs: dict[str, str]
) -> None:
    response = bot.post("issue_comment", approve(world), **kwargs)
    assert (response.status_code, response.json()) == (
        401,
        {"status": "missing or invalid signature"},
    )
    assert_nothing_done(bot, world, actions)


def test_a_signature_of_another_body_is_401(bot: Bot, world: Scene, actions: FakeActions) -> None:
    signed = sign(SECRET, b'{"action": "created"}')
    body = payloads.pr_comment(world.bot_pr, "wendy", "/gitmedic merge", 1)
    assert bot.post("issue_comment", body, signature=signed).status_code == 401
    assert_nothing_done(bot, world, actions)


def test_verify_uses_the_raw_bytes() -> None:
    body = b'{"a": 1}'
    assert verify(SECRET, body, sign(SECRET, body))
    assert not verify(SECRET, b'{"a":1}', sign(SECRET, body))  # same JSON, other bytes
    assert not verify("", body, sign("", body))  # no secret configured: nothing verifies


def test_a_replayed_delivery_is_refused(bot: Bot, world: Scene, actions: FakeActions) -> None:
    assert bot.post("issue_comment", approve(world), delivery="d-1").status_code == 202
    replay = bot.post("issue_comment", approve(world), delivery="d-1")
    assert (replay.status_code, replay.json()) == (200, {"status": "duplicate delivery"})
    bot.settle()
    assert actions.calls == [f"approve #{world.bot_pr}"]


def test_a_replay_after_a_restart_is_still_refused(
    world: Scene, actions: FakeActions, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with running(make_service(world, actions, state)) as first:
        assert first.post("issue_comment", approve(world), delivery="d-7").status_code == 202
        first.settle()
    with running(make_service(world, actions, state)) as second:
        replay = second.post("issue_comment", approve(world), delivery="d-7")
        second.settle()
    assert (replay.status_code, replay.json()) == (200, {"status": "duplicate delivery"})
    assert actions.calls == [f"approve #{world.bot_pr}"]


def test_a_shared_journal_that_cannot_be_reached_is_503_and_nothing_is_queued(
    world: Scene, actions: FakeActions, tmp_path: Path
) -> None:
    """Whether another replica accepted the delivery cannot be told: it is not accepted
    here (the sender delivers it again), never taken as new."""

    def unreachable(keys: Sequence[str], now: float) -> bool:
        raise JournalUnavailable("the journal at postgresql://bot:****@db/gm failed: gone")

    state = tmp_path / "state"
    with running(make_service(world, actions, state, seen=unreachable)) as bot:
        refused = bot.post("issue_comment", approve(world), delivery="d-8")
        bot.settle()
        metrics = bot.client.get("/metrics").text
    said = {"status": "the journal cannot be reached"}
    assert (refused.status_code, refused.json()) == (503, said)
    assert actions.calls == [] and bot.service.store.queued() == []
    counted = 'gitmedic_webhook_deliveries_total{event="issue_comment",result="unavailable"}'
    assert f"{counted} 1.0" in metrics
    with running(make_service(world, actions, state)) as again:  # reachable again: new
        assert again.post("issue_comment", approve(world), delivery="d-8").status_code == 202
        again.settle()
    assert actions.calls == [f"approve #{world.bot_pr}"]


def test_an_oversized_body_is_413_before_it_is_read(
    bot: Bot, world: Scene, actions: FakeActions
) -> None:
    big = approve(world)
    big["padding"] = "x" * 70_000
    response = bot.post("issue_comment", big)
    assert (response.status_code, response.json()) == (413, {"status": "request body too large"})
    assert_nothing_done(bot, world, actions)


def test_an_oversized_body_without_content_length_is_413(
    bot: Bot, world: Scene, actions: FakeActions
) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 1000

    response = bot.client.post(
        "/webhooks/github",
        content=chunks(),
        headers={"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d-big"},
    )
    assert response.status_code == 413
    assert_nothing_done(bot, world, actions)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"action": "created", ', "body is not JSON"),
        (b"\xff\xfe not utf-8", "body is not JSON"),
        (b'["a", "list"]', "body is not a JSON object"),
    ],
)
def test_malformed_bodies_are_400(
    bot: Bot, world: Scene, actions: FakeActions, raw: bytes, message: str
) -> None:
    response = bot.post("issue_comment", None, raw=raw)
    assert (response.status_code, response.json()) == (400, {"status": message})
    assert_nothing_done(bot, world, actions)


def test_a_delivery_without_its_id_is_400(bot: Bot, world: Scene) -> None:
    body = b'{"zen": "x"}'
    response = bot.client.post(
        "/webhooks/github",
        content=body,
        headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(SECRET, body)},
    )
    assert response.status_code == 400


def test_unknown_events_are_202_ignored_and_not_stored(bot: Bot, actions: FakeActions) -> None:
    response = bot.post("star", payloads.star(), delivery="d-rd")
    assert (response.status_code, response.json()) == (202, {"status": "event star ignored"})
    assert bot.service.store.result("d-rd") is None


@pytest.mark.parametrize("user", ["mallory", "rita", "trish"])
def test_commands_from_non_collaborators_are_refused(
    bot: Bot, world: Scene, actions: FakeActions, user: str
) -> None:
    body = "/gitmedic merge\n/gitmedic revert\n/gitmedic approve"
    assert bot.post("issue_comment", payloads.pr_comment(world.bot_pr, user, body, 77)).is_success
    bot.settle()
    assert actions.calls == []
    replies = [c.body for c in world.forge.list_comments(world.bot_pr) if c.author == BOT_LOGIN]
    assert len(replies) == 1  # one refusal answers the whole comment
    assert all(f"Sorry @{user}" in r and "Nothing was done." in r for r in replies)


def test_approvals_from_non_collaborators_are_ignored(
    bot: Bot, world: Scene, actions: FakeActions
) -> None:
    assert bot.post("pull_request_review", payloads.review(world.bot_pr, "mallory")).is_success
    bot.settle()
    assert actions.calls == []


def test_metrics_count_deliveries_by_event_and_result(bot: Bot, world: Scene) -> None:
    bot.post("issue_comment", approve(world), delivery="m-1")
    bot.post("issue_comment", approve(world), delivery="m-1")
    bot.post("issue_comment", approve(world), signature="")
    bot.settle()
    text = bot.client.get("/metrics").text
    for line in (
        'gitmedic_webhook_deliveries_total{event="issue_comment",result="queued"} 1.0',
        'gitmedic_webhook_deliveries_total{event="issue_comment",result="duplicate"} 1.0',
        'gitmedic_webhook_deliveries_total{event="issue_comment",result="unauthorized"} 1.0',
        'gitmedic_webhook_jobs_total{event="issue_comment",status="done"} 1.0',
        "gitmedic_queue_depth 0.0",
    ):
        assert line in text
