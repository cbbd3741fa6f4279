"""``serve --repos``: a delivery acts on the repository its payload names, with that
repository's forge, actions and permissions; one for a repository not served is
acknowledged, counted and never acted on (bot.service.webhook.routes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gitmedic.bot.service.settings import git_changed_files
from gitmedic.bot.service.webhook.deliveries import Delivery
from gitmedic.bot.service.webhook.handlers import Deps
from gitmedic.bot.service.webhook.routes import Routes
from gitmedic.bot.service.webhook.service import Service, ServiceConfig
from gitmedic.reconciler.forge import BOT_LOGIN, Permission
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.bot.service_kit import SECRET, running

SHOP, BLOG = "alice/shop", "alice/blog"


def deps(world: Scene, actions: FakeActions) -> Deps:
    return Deps(world.forge, actions, git_changed_files(world.repo), ("apps/web",))


def for_repo(payload: dict[str, Any], full_name: str | None) -> dict[str, Any]:
    if full_name is None:
        del payload["repository"]
    else:
        payload["repository"]["full_name"] = full_name
    return payload


def hold(world: Scene, full_name: str | None, comment_id: int) -> dict[str, Any]:
    payload = payloads.pr_comment(world.bot_pr, "maria", "/gitmedic hold", comment_id)
    return for_repo(payload, full_name)


def two_repos(tmp_path: Path) -> tuple[Scene, FakeActions, Scene, FakeActions, Service]:
    shop, blog = scene(tmp_path / "shop"), scene(tmp_path / "blog")
    shop.forge.set_permission("maria", Permission.READ)  # a maintainer of blog only
    at_shop, at_blog = FakeActions(), FakeActions()
    routes = Routes.of([(SHOP, deps(shop, at_shop)), (BLOG, deps(blog, at_blog))])
    service = Service(ServiceConfig(SECRET, tmp_path / "state"), routes)
    return shop, at_shop, blog, at_blog, service


def bot_replies(world: Scene) -> list[str]:
    return [c.body for c in world.forge.list_comments(world.bot_pr) if c.author == BOT_LOGIN]


def test_a_comment_acts_on_the_repository_its_payload_names_with_its_permissions(
    tmp_path: Path,
) -> None:
    shop, at_shop, blog, at_blog, service = two_repos(tmp_path)
    with running(service) as bot:
        assert bot.post("issue_comment", hold(blog, BLOG, 11)).status_code == 202
        # GitHub's names ignore case; maria may only read shop: refused there
        assert bot.post("issue_comment", hold(shop, "Alice/Shop", 12)).status_code == 202
        bot.settle()
    assert at_blog.calls == [f"hold #{blog.bot_pr}"]
    assert at_shop.calls == []
    (refusal,) = bot_replies(shop)
    assert "needs write, maintain or admin permission" in refusal, refusal
    assert len(bot_replies(blog)) == 1


def test_a_delivery_for_a_repository_not_served_is_acknowledged_and_never_acted_on(
    tmp_path: Path,
) -> None:
    shop, at_shop, blog, at_blog, service = two_repos(tmp_path)
    with running(service) as bot:
        answer = bot.post("issue_comment", hold(shop, "alice/other", 13), delivery="other-1")
        no_repo = bot.post("issue_comment", hold(shop, None, 14), delivery="none-1")
        ping = bot.post("ping", for_repo(payloads.load("ping/ping.json"), None), delivery="ping-1")
        bot.settle()
        metrics = bot.client.get("/metrics").text
    assert (answer.status_code, answer.json()) == (
        202,
        {"status": "repository alice/other is not served here"},
    )
    assert no_repo.status_code == 202 and "without a repository" in no_repo.json()["status"]
    assert ping.json() == {"status": "queued"}
    assert service.store.result("other-1") is None, "an ignored delivery is not stored"
    assert service.store.result("ping-1") == ("done", "pong"), "a ping needs no repository"
    assert (at_shop.calls, at_blog.calls) == ([], [])
    assert bot_replies(shop) == [] and bot_replies(blog) == []
    counted = 'gitmedic_webhook_deliveries_total{event="issue_comment",result="unknown_repository"}'
    assert f"{counted} 2.0" in metrics


def test_a_delivery_queued_for_a_repository_no_longer_served_is_ignored_at_start(
    tmp_path: Path,
) -> None:
    shop, at_shop, _, at_blog, service = two_repos(tmp_path)
    body = json.dumps(hold(shop, "alice/gone", 15)).encode()
    assert service.store.accept(Delivery("left-over", "issue_comment", body), 1.0)
    with running(service) as bot:
        bot.settle()
    assert service.store.result("left-over") == (
        "ignored",
        "repository alice/gone is not served here",
    )
    assert (at_shop.calls, at_blog.calls) == ([], [])


def test_one_repository_without_repos_acts_whatever_the_payload_names(tmp_path: Path) -> None:
    world, actions = scene(tmp_path), FakeActions()
    service = Service(ServiceConfig(SECRET, tmp_path / "state"), deps(world, actions))
    with running(service) as bot:
        bot.post("issue_comment", hold(world, "someone/else", 16))
        bot.settle()
    assert actions.calls == [f"hold #{world.bot_pr}"]


def test_routes_pick_by_name_and_only_logging_events_go_without_one(tmp_path: Path) -> None:
    shop, blog = scene(tmp_path / "shop"), scene(tmp_path / "blog")
    a, b = deps(shop, FakeActions()), deps(blog, FakeActions())
    routes = Routes.of([(SHOP, a), (BLOG, b)])
    assert routes.pick("push", {"repository": {"full_name": "ALICE/blog"}}) is b
    assert routes.pick("push", {"repository": {"full_name": "alice/blo"}}) is None
    assert routes.pick("installation", {}) is a
    assert routes.pick("issues", {"repository": None}) is None
    assert routes.refusal("push", {"repository": {"full_name": SHOP}}) is None
