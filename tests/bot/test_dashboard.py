"""The dashboard issue: rendered from the journal, golden-pinned, updated only on change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmedic.bot.render.dashboard import TITLE, DashboardKeeper, DashboardView, render_dashboard
from gitmedic.reconciler.transaction import Journal, Phase, Plan, Record
from tests.bot.fakes import scene
from tests.support.golden import assert_golden

T0 = 1_736_935_200.0  # 2025-01-15 10:00 UTC


def plan(
    txn: str, incident: str, attempt: int, strategy: str = "playbook", tokens: int = 0
) -> Plan:
    return Plan(
        txn_id=txn, app="shop", incident=incident, attempt=attempt, strategy=strategy,
        branch=f"gitmedic/{incident}/fix-{attempt}", title="fix", edits=(), base_sha="b" * 40,
        mu_pre=3.0, targets=(), auto_merge=False, tokens=tokens,
    )  # fmt: skip


def record(journal: Journal, txn: str, steps: list[tuple[Phase, float, dict[str, Any]]]) -> None:
    for seq, (phase, at, data) in enumerate(steps, 1):
        journal.append(txn, Record(seq, phase, T0 + at, data))


def journal_with_history(path: Path) -> Journal:
    journal = Journal(path)
    journal.create(plan("inc-a-1", "inc-a", 1), T0)
    record(journal, "inc-a-1", [
        (Phase.PR_OPENED, 0, {"pr": 1}), (Phase.GATED, 20, {}), (Phase.MERGED, 30, {}),
        (Phase.SYNCED, 90, {}), (Phase.COMMITTED, 215, {"reason": "mu 0 <= 3"}),
    ])  # fmt: skip
    journal.create(plan("inc-b-1", "inc-b", 1, "llm", 5120), T0)
    record(journal, "inc-b-1", [
        (Phase.PR_OPENED, 100, {"pr": 2}), (Phase.GATED, 120, {}), (Phase.MERGED, 130, {}),
        (Phase.UNDOING, 400, {"reason": "verification failed: mu rose from 3 to 5"}),
        (Phase.REVERT_OPENED, 410, {"revert_pr": 3}), (Phase.REVERTED, 420, {}),
        (Phase.REVERT_SYNCED, 480, {}), (Phase.RESTORED, 600, {}),
    ])  # fmt: skip
    journal.create(plan("inc-b-2", "inc-b", 2, "llm", 2048), T0 + 700)
    record(journal, "inc-b-2", [
        (Phase.PR_OPENED, 700, {"pr": 4}), (Phase.GATED, 720, {}),
        (Phase.AWAITING_APPROVAL, 721, {"reason": "waiting for approval"}),
    ])  # fmt: skip
    journal.create(plan("inc-c-1", "inc-c", 1, "bisect"), T0 + 800)
    record(journal, "inc-c-1", [(Phase.PR_OPENED, 800, {"pr": 5}), (Phase.MERGED, 860, {})])
    return journal


def view(tmp_path: Path, flags: tuple[str, ...] = ()) -> DashboardView:
    journal = journal_with_history(tmp_path / "journal.sqlite")
    return DashboardView(tuple(journal.transactions()), flags)


def test_dashboard_matches_golden_file(tmp_path: Path) -> None:
    flags = ("outcomes.jsonl: line 7 rewritten | not only appended", "playbook dns has no verify")
    assert_golden("dashboard/dashboard.md", render_dashboard(view(tmp_path, flags)))


def test_an_empty_journal_renders_an_empty_dashboard(tmp_path: Path) -> None:
    text = render_dashboard(DashboardView(()))
    assert "**0** open incident(s)" in text
    assert text.count("_None._") == 4
    assert "All memory checks pass." in text


def test_the_keeper_updates_the_issue_only_when_something_changed(tmp_path: Path) -> None:
    world = scene(tmp_path)
    keeper = DashboardKeeper(world.forge)
    first = view(tmp_path / "a")
    assert keeper.update(first) is True
    assert keeper.update(first) is False  # nothing changed: no forge call
    issue = keeper.issue
    assert issue is not None and issue.title == TITLE and issue.labels == ("gitmedic",)
    assert keeper.update(DashboardView(first.transactions, ("a new flag",))) is True
    updated = world.forge.get_issue(issue.number)
    assert ":warning: a new flag" in updated.body
    restarted = DashboardKeeper(world.forge)  # a restarted bot: one idempotent call
    assert restarted.update(DashboardView(first.transactions, ("a new flag",))) is True
    assert world.forge.get_issue(issue.number).body == updated.body
    assert restarted.issue is not None and restarted.issue.number == issue.number
