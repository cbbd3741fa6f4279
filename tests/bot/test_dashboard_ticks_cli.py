"""Ticking a box on the dashboard of a real ``gitmedic serve``: the same hold as the command's.

``run --once`` leaves a fix waiting for approval (``auto_merge: never``); its
dashboard offers ``hold`` and ``retry`` for the fix's PR. A person with read
permission ticks ``hold``: refused as ``/gitmedic hold`` would refuse them, and
the PR is not held. A maintainer ticks it: the PR gets the hold label, the answer
is on the dashboard, and the box is cleared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.dashboard import TITLE
from gitmedic.reconciler.forge import BOT_LOGIN, Issue, NotFound, Permission
from gitmedic.reconciler.transaction.forge_ports import HOLD_LABEL
from tests.bot.cli_world import (
    NEVER,
    configured_repo,
    prs,
    run_once,
    serving,
    target_port_fault,
    until,
)
from tests.bot.payloads import issue_edited

pytestmark = pytest.mark.integration


def dashboard(forge: LocalForge) -> Issue:
    """The dashboard issue (the local forge numbers issues and PRs in one sequence)."""
    for number in range(1, 20):
        try:
            issue = forge.get_issue(number)
        except NotFound:
            continue
        if issue.title == TITLE:
            return issue
    raise AssertionError("run left no dashboard issue")


def test_a_tick_on_the_dashboard_holds_the_fix_as_the_command_would(tmp_path: Path) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    target_port_fault(repo, app, namespace)
    assert run_once(repo).rc == 1  # the fix waits for a person
    (fix,) = prs(repo)
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)
    forge.set_permission("rita", Permission.READ)
    box = f"- [ ] <!-- gitmedic:dashboard hold {fix['number']} -->"
    board = dashboard(forge)
    assert box in board.body

    def tick(user: str, delivery: str) -> None:
        before = forge.get_issue(board.number).body
        assert box in before
        after = before.replace(box, box.replace("[ ]", "[x]"))
        forge.edit_issue_body(board.number, after)
        payload = issue_edited(board.number, BOT_LOGIN, user, before, after)
        assert served.post("issues", payload, delivery).status_code == 202

    def answered(topic: str) -> bool:
        return any(c.topic == topic for c in forge.list_comments(board.number))

    def held() -> bool:
        return HOLD_LABEL in forge.get_pr(fix["number"]).labels

    def cleared() -> bool:
        """Rewritten since the tick: no box of the dashboard ticked."""
        return "- [x] <!-- gitmedic:dashboard" not in forge.get_issue(board.number).body

    with serving(repo) as served:
        tick("rita", "tick-1")
        assert until(lambda: answered("command-refused:rita") and cleared(), 120), "no answer"
        assert not held()
        tick("maria", "tick-2")
        assert until(held, 120), "maria's tick did not hold the fix"
        assert until(cleared, 60)
    replies = {c.topic: c.body for c in forge.list_comments(board.number)}
    assert "Sorry @rita, `/gitmedic hold` needs write" in replies["command-refused:rita"]
    (mine,) = [body for topic, body in replies.items() if str(topic).startswith("dashboard:")]
    assert f"> /gitmedic hold on #{fix['number']}" in mine and "Holding" in mine
