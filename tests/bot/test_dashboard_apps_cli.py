"""The real ``gitmedic run`` and ``serve`` on a repository of two apps: one dashboard issue
shows both apps' transactions and boxes, and a box of the second app, ticked, acts.

Each app has a broken Service port and ``auto_merge: never``: ``run --once`` (and
serve's monitor) leave a fix of each app waiting for approval. Before the apps shared
the issue, each wrote its own view to it and the last writer hid the other's
transactions.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.dashboard import TITLE
from gitmedic.reconciler.forge import BOT_LOGIN, Issue, NotFound, Permission
from gitmedic.reconciler.transaction.forge_ports import HOLD_LABEL
from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import NEVER, prs, run_once, serving, until
from tests.bot.payloads import issue_edited
from tests.bot.test_run_every_app import WEB, config, repo_of

pytestmark = pytest.mark.integration
APPS = ["shop", "blog"]


def dashboards(forge: LocalForge) -> list[Issue]:
    """Every dashboard issue (the local forge numbers issues and PRs in one sequence)."""
    found = []
    for number in range(1, 20):
        try:
            issue = forge.get_issue(number)
        except NotFound:
            continue
        if issue.title.startswith(TITLE):
            found.append(issue)
    return found


def two_broken_apps(tmp_path: Path) -> Path:
    def web(folder: Path, name: str) -> None:
        (folder / "web.yaml").write_text(WEB.format(ns=name, minor=1))

    repo = repo_of(tmp_path, APPS, web)
    (repo / ".gitmedic" / "config.yaml").write_text(config(APPS) + NEVER)
    for name in APPS:
        file = repo / "apps" / name / "web.yaml"
        file.write_text(file.read_text().replace("targetPort: 8080", "targetPort: 9090"))
    commit_all(repo, "both apps: the service's port")
    return repo


def section(body: str, app: str) -> str:
    return body.split(f"## App {app}")[1].split("## App")[0] if f"## App {app}" in body else ""


def held_box(body: str, app: str) -> int | None:
    """The PR of the app's ``hold`` box on the dashboard, if it has one."""
    found = re.search(r"- \[ \] <!-- gitmedic:dashboard hold ([0-9]+) -->", section(body, app))
    return int(found[1]) if found else None


def test_run_once_puts_both_apps_transactions_on_one_dashboard(tmp_path: Path) -> None:
    repo = two_broken_apps(tmp_path)
    done = run_once(repo)
    assert done.rc == 1, done.err[-3000:]  # both fixes wait for a person
    fixes = {p["branch"].split("/")[1].split("-")[0]: p for p in prs(repo)}
    assert sorted(fixes) == sorted(APPS), fixes
    (board,) = dashboards(LocalForge(repo))
    assert "**2** apps: **2** open incident(s) · **2** transaction(s) in flight" in board.body
    for name, pr in fixes.items():
        assert held_box(board.body, name) == pr["number"], name
        assert f"| {name} | awaiting-approval | #{pr['number']} |" in section(board.body, name)


def test_serve_keeps_one_dashboard_and_a_tick_on_the_second_apps_box_acts(
    tmp_path: Path,
) -> None:
    repo = two_broken_apps(tmp_path)
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)

    def both() -> bool:
        boards = dashboards(forge)
        return len(boards) == 1 and all(held_box(boards[0].body, a) for a in APPS)

    with serving(repo) as served:
        assert until(both, 300), [b.body for b in dashboards(forge)]
        (board,) = dashboards(forge)
        shop, blog = held_box(board.body, "shop"), held_box(board.body, "blog")
        assert shop is not None and blog is not None and shop != blog
        box = f"- [ ] <!-- gitmedic:dashboard hold {blog} -->"
        before = forge.get_issue(board.number).body
        after = before.replace(box, box.replace("[ ]", "[x]"))
        forge.edit_issue_body(board.number, after)
        payload = issue_edited(board.number, BOT_LOGIN, "maria", before, after)
        assert served.post("issues", payload, "tick-blog").status_code == 202
        held = until(lambda: HOLD_LABEL in forge.get_pr(blog).labels, 120)
        assert held, [c.body for c in forge.list_comments(board.number)]

        def cleared() -> bool:
            now = forge.get_issue(board.number).body
            return "- [x] <!-- gitmedic:dashboard" not in now and held_box(now, "shop") == shop

        assert until(cleared, 60), "the dashboard was not written again with both apps"
    assert HOLD_LABEL not in forge.get_pr(shop).labels
    assert len(dashboards(forge)) == 1
