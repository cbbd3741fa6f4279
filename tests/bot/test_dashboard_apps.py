"""One dashboard issue for the apps of a repository: a section per app, every app's
transactions and boxes shown whichever app wrote last, capped below GitHub's limit,
and a box of any app acted on through the same permission check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gitmedic.bot.render.dashboard import (
    DashboardKeeper,
    DashboardView,
    render_board,
    render_dashboard,
)
from gitmedic.bot.render.dashboard_apps import MAX_BODY, AppSection, fit_sections
from gitmedic.bot.render.dashboard_controls import Control, offered, ticked
from gitmedic.bot.service.dashboard_desk import DashboardDesk, DashboardEdit, handle_edit
from gitmedic.reconciler.forge import BOT_LOGIN
from gitmedic.reconciler.transaction import Journal, Phase, Record, TxnState
from tests.bot.fakes import FakeActions, scene
from tests.bot.test_dashboard import T0, journal_with_history, plan, record
from tests.support.golden import assert_golden

HOLD_4 = "- [ ] <!-- gitmedic:dashboard hold 4 --> hold #4: do not merge it automatically"
HOLD_21 = "- [ ] <!-- gitmedic:dashboard hold 21 --> hold #21: do not merge it automatically"


def blog_journal(path: Path) -> Journal:
    """The second app: one fix waiting for approval (PR #21), one committed (PR #20)."""
    journal = Journal(path)
    journal.create(dataclasses.replace(plan("blog-x-1", "blog-x", 1), app="blog"), T0)
    record(journal, "blog-x-1", [
        (Phase.PR_OPENED, 50, {"pr": 20}), (Phase.MERGED, 60, {}), (Phase.SYNCED, 90, {}),
        (Phase.COMMITTED, 300, {"reason": "mu 0 <= 2"}),
    ])  # fmt: skip
    journal.create(dataclasses.replace(plan("blog-y-1", "blog-y", 1), app="blog"), T0 + 900)
    record(journal, "blog-y-1", [
        (Phase.PR_OPENED, 900, {"pr": 21}), (Phase.GATED, 910, {}),
        (Phase.AWAITING_APPROVAL, 911, {"reason": "waiting for approval"}),
    ])  # fmt: skip
    return journal


def views_of(tmp_path: Path) -> tuple[Journal, Journal]:
    return (
        journal_with_history(tmp_path / "shop.sqlite"),
        blog_journal(tmp_path / "blog.sqlite"),
    )


def view(journal: Journal, app: str, flags: tuple[str, ...] = ()) -> DashboardView:
    return DashboardView(tuple(journal.transactions()), flags, app=app)


def test_two_apps_render_a_section_each_matching_the_golden_file(tmp_path: Path) -> None:
    shop, blog = views_of(tmp_path)
    body = render_board([view(shop, "shop", ("playbook dns has no verify",)), view(blog, "blog")])
    assert_golden("dashboard/dashboard_apps.md", body)
    shop_part, blog_part = body.split("## App shop")[1].split("## App blog")
    assert "inc-b-2" in shop_part and "blog-y-1" not in shop_part
    assert "blog-y-1" in blog_part and HOLD_21 in blog_part and "inc-b-2" not in blog_part
    assert "**2** apps: **3** open incident(s) · **3** transaction(s) in flight" in body


def test_one_app_keeps_the_dashboard_it_had(tmp_path: Path) -> None:
    shop, _ = views_of(tmp_path)
    assert render_board([view(shop, "shop")]) == render_dashboard(view(shop, "shop"))


def test_the_last_app_to_write_leaves_the_others_sections(tmp_path: Path) -> None:
    world = scene(tmp_path)
    shop, blog = views_of(tmp_path)
    keeper = DashboardKeeper(world.forge)
    keeper.join(lambda: view(shop, "shop"))
    keeper.join(lambda: view(blog, "blog"))
    assert keeper.refresh() is True
    blog.append("blog-y-1", Record(4, Phase.REJECTED, T0 + 1000, {"reason": "closed"}))
    assert keeper.refresh() is True  # the blog's loop wrote last
    assert keeper.issue is not None
    body = world.forge.get_issue(keeper.issue.number).body
    assert HOLD_4 in body and "inc-b-2" in body  # the shop's boxes and transactions
    assert "blog-y-1" in body and HOLD_21 not in body  # the blog's, as its journal is now
    assert keeper.refresh() is False  # nothing changed: no forge call


def test_a_tick_on_the_second_apps_box_acts_and_keeps_every_section(tmp_path: Path) -> None:
    world = scene(tmp_path)
    shop, blog = views_of(tmp_path)
    keeper = DashboardKeeper(world.forge)

    def shop_view() -> DashboardView:
        return view(shop, "shop")

    def blog_view() -> DashboardView:
        return view(blog, "blog")

    keeper.join(shop_view)
    keeper.join(blog_view)
    keeper.refresh()
    assert keeper.issue is not None
    number = keeper.issue.number
    desk = DashboardDesk([(shop_view, keeper), (blog_view, keeper)])
    assert Control("hold", 21) in desk.offered() and Control("hold", 4) in desk.offered()
    actions = FakeActions()

    def tick(box: str, by: str) -> str:
        before = world.forge.get_issue(number).body
        after = before.replace(box, box.replace("- [ ]", "- [x]", 1))
        world.forge.edit_issue_body(number, after)
        edit = DashboardEdit(number, BOT_LOGIN, by, before, after)
        return handle_edit(world.forge, actions, desk, edit, BOT_LOGIN)

    assert tick(HOLD_21, "rita") == "dashboard boxes ticked by rita: hold #21"
    assert actions.calls == []  # read permission: the command's refusal, nothing run
    assert tick(HOLD_21, "wendy") == "dashboard boxes ticked by wendy: hold #21"
    assert actions.calls == ["hold #21"]
    body = world.forge.get_issue(number).body
    assert "- [x]" not in body  # cleared, in one write of every app's section
    assert "## App shop" in body and "## App blog" in body and HOLD_4 in body


def test_sections_give_up_tables_then_apps_then_lines_to_fit() -> None:
    boxes = "\n".join(f"  - [ ] <!-- gitmedic:dashboard hold {n} --> hold" for n in range(1, 40))
    sections = [
        AppSection(
            f"app-{i}", f"## App app-{i}\n\n{boxes}\n\n" + "t" * 3000, f"## App app-{i}\n\n{boxes}"
        )
        for i in range(5)
    ]
    full = fit_sections("head", sections, limit=100_000)
    assert full.count("t" * 3000) == 5
    short = fit_sections("head", sections, limit=12_000)
    assert "t" * 100 not in short and short.count("## App") == 5 and len(short) <= 12_000
    some = fit_sections("head", sections, limit=5_000)
    assert len(some) <= 5_000 and "## App app-0" in some and "## App app-4" not in some
    assert "Left out to fit GitHub's size limit:" in some and "`app-4`" in some
    cut = fit_sections("head", sections, limit=900)
    assert len(cut) <= 900 and "cut to fit GitHub's size limit" in cut
    assert "`app-1`" in cut  # the other apps named, never dropped in silence
    kept = ticked(cut)
    assert kept and all(not on for on in kept.values())  # only whole box lines survive
    for line in cut.splitlines():
        if "gitmedic:dashboard" in line:
            assert line.endswith("--> hold")


def test_thirty_apps_with_long_histories_stay_under_githubs_limit() -> None:
    views = []
    for i in range(30):
        app = f"app-{i}"
        txns = tuple(
            TxnState(
                dataclasses.replace(plan(f"{app}-inc-{n}-1", f"inc-{n}", 1), app=app),
                Phase.GATED,
                pr=1000 * i + n + 1,
                records=(
                    Record(1, Phase.PR_OPENED, T0 + n, {}),
                    Record(2, Phase.GATED, T0 + n, {}),
                ),
            )
            for n in range(40)
        )
        views.append(DashboardView(txns, app=app))
    body = render_board(views)
    assert len(body) <= MAX_BODY
    assert "## App app-0" in body and "Left out to fit GitHub's size limit" in body
    assert "`app-19` and 10 more." in body  # the head names 20 apps, however many there are
    shown = set(ticked(body))
    assert shown and shown <= offered(t for v in views for t in v.transactions)
