"""Revert PRs of a person's change: asked for, or offered by the watch (goldens, and on a forge).

The bodies keep the anatomy of the transaction's own revert PRs: the change undone,
linked; who asked and why, or what was measured; mu explained in one sentence; what
happens next. On the local forge, the PR the tick opens carries them, not the
forge's "Reverts #N.".
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.commands.dispatch import CommentEvent, handle_comment
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_asked import Asked, requested_revert_body, watched_revert_body
from gitmedic.reconciler.forge import BOT_LOGIN, PrFilter, PrState
from tests.bot.fakes import FakeActions, scene
from tests.bot.test_actions_live import World, watch_ticks
from tests.support.golden import assert_golden

EVIDENCE = (
    "pod-crashloop on Deployment/shop/catalog: container server is crash-looping",
    "probe /products: 503 <img src=x> @shop-team",
)


def test_a_requested_revert_says_who_asked_and_why() -> None:
    asked = Asked("alice", "in a comment on #7", "checkout p99 doubled since <b>this</b> @sre")
    body = requested_revert_body(7, "Scale web to 5", "shop", 10.0, asked)
    assert_golden("pr_bodies/revert_requested.md", body)


def test_a_request_without_words_says_none_were_given() -> None:
    body = requested_revert_body(7, "Scale", "shop", 0.0, Asked("bob", "on the dashboard"))
    assert "_No reason given with the command._" in body
    assert "on the dashboard" in body and MU_EXPLAINED in body


def test_the_watchs_revert_says_what_was_measured() -> None:
    body = watched_revert_body(
        7, "ab" * 20, "Bump catalog image", "shop", (3.0, 18.0),
        "verification failed: mu rose from 3 to 18", EVIDENCE,
    )  # fmt: skip
    assert_golden("pr_bodies/revert_watched.md", body)


def test_the_commands_words_and_its_author_reach_the_revert(tmp_path: Path) -> None:
    world, actions = scene(tmp_path), FakeActions()
    body = "/gitmedic revert checkout p99 doubled"
    event = CommentEvent("created", world.bot_pr, True, 5, "wendy", body)
    handle_comment(world.forge, actions, event)
    assert actions.asked == [
        Asked("wendy", f"in a comment on #{world.bot_pr}", "checkout p99 doubled")
    ]


# ----------------------------------------------------------------------------- on a forge


def test_a_persons_revert_opens_a_pr_with_the_requested_anatomy(tmp_path: Path) -> None:
    world = World(tmp_path)
    pr, _ = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    world.actions.revert(pr, Asked("maria", f"in a comment on #{pr}", "cart is over capacity"))
    world.tick()  # the next tick opens it
    (revert,) = [p for p in world.forge.list_prs(PrFilter.ALL) if p.number != pr]
    expected = requested_revert_body(
        pr,
        "Change cart.yaml",
        "shop",
        5.0,
        Asked("maria", f"in a comment on #{pr}", "cart is over capacity"),
    )
    assert revert.body.startswith(expected)
    assert revert.bot_state is not None and revert.bot_state["reverts"] == pr
    final = world.settle(f"revert/pr-{pr}")  # the body did not change how it is carried
    assert final.pr == revert.number and final.phase is not None
    assert world.forge.get_pr(revert.number).state is PrState.MERGED, final.reason


def test_the_watchs_revert_pr_says_what_was_measured(tmp_path: Path) -> None:
    world = World(tmp_path)
    image = "image: ghcr.io/gitmedic/shop-catalog:"
    text = (world.repo / "apps" / "shop" / "catalog.yaml").read_text()
    tag = text.split(image, 1)[1].split()[0]
    pr, sha = world.human_merge("bob/img", "catalog.yaml", image + tag, image + "9.9.9-broken")
    world.actions.watch_merge(pr, sha)
    watch_ticks(world, sha)
    (revert,) = world.forge.find_prs({"reverts": pr})
    assert revert.state is PrState.OPEN and revert.author == BOT_LOGIN
    assert revert.body.startswith(f"Reverts #{pr} (Change catalog.yaml): a person's change")
    assert f"merged as `{sha[:12]}`" in revert.body
    assert (
        "| before #" in revert.body
        and "**Verdict:** verification failed: mu rose from 5 to 10 (oracles" in revert.body
    )
    assert "- pod-crashloop on Deployment/shop/catalog" in revert.body
    assert MU_EXPLAINED in revert.body and "offered, not merged" in revert.body
