"""``gitmedic demo`` end to end: the stories' outcomes from its summary.json."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import main


@pytest.mark.integration
def test_the_demo_fixes_reverts_and_retries_fixes_from_memory_and_escalates_the_runtime_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["demo"]) == 0
    (summary_file,) = tmp_path.glob("gitmedic-demo-*/summary.json")
    summary = json.loads(summary_file.read_text())
    a, b, c, d = summary["stories"]
    assert [s["story"] for s in summary["stories"]] == ["a", "b", "c", "d"]
    assert a["outcomes"] == ["committed"] and a["healthy"] and a["tokens"] == 0
    assert a["prs"] == 2 and a["reverts"] == 0 and len(a["resolution_s"]) == 1  # fix + memory
    # The first candidate regresses and is reverted; the retry keeps it and fixes what it caused.
    assert b["outcomes"] == ["reverted", "committed"] and b["healthy"] and b["reverts"] == 1
    assert b["playbooks"] == ["", "wrong-command"] and b["tokens"] == 0
    assert b["prs"] == 4 and len(b["resolution_s"]) == 1  # fix, its revert, the retry, memory
    # Fail fast: the crash-looping candidate is undone at the failure limit, not when the sync
    # times out (simulated seconds, the sim's clock: before it, (a) 120 s and (b) 485 s).
    assert b["resolution_s"][0] < 2 * a["resolution_s"][0], (a["resolution_s"], b["resolution_s"])
    assert c["outcomes"] == ["committed"] and c["healthy"] and c["tokens"] == 0
    # (b)'s lesson, learned in the repo, makes (c)'s first candidate right: no revert.
    assert c["prs"] == 2 and c["reverts"] == 0
    assert c["playbooks"] == ["pod-image-pull-with-command"]
    assert c["from_memory"].startswith(
        "fixed from memory at the first attempt with 0 tokens, by learned playbook "
        "pod-image-pull-with-command"
    )
    assert d["outcomes"] == [] and d["prs"] == 0 and d["escalated"] and not d["healthy"]
    assert_names_the_injected_cause(Path(summary["repo"]), d["escalated"])
    log = subprocess.run(["git", "-C", summary["repo"], "log", "--format=%s", "main"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "catalog: move to the new port" in log and "fix(shop)" in log
    assert "catalog: release 2.1.0" in log and "catalog: the gRPC entrypoint of 2.1.0" in log
    assert "checkout: release 1.4.0" in log
    learned = subprocess.run(["git", "-C", summary["repo"], "ls-tree", "-r", "--name-only",
                              "main", ".gitmedic/"], capture_output=True, text=True,
                             check=True).stdout.split()  # fmt: skip
    assert ".gitmedic/playbooks/pod-image-pull-with-command/README.md" in learned
    assert ".gitmedic/rules/learned-pod-image-pull-with-command.yaml" in learned
    assert not [p for p in learned if p.endswith(".py")]  # memory is data, never code
    assert summary["repo"] in capsys.readouterr().out
    assert_told_on_the_forge(Path(summary["repo"]))


def assert_names_the_injected_cause(repo: Path, escalated: list[str]) -> None:
    """Story (d)'s issue blames the database credentials, not a healthy neighbour."""
    from gitmedic.bot.forges.local import LocalForge

    (issue,) = escalated
    body = LocalForge(repo).get_issue(int(issue.removeprefix("issue #"))).body
    why = body.split("**Why gitmedic stopped:**", 1)[1].split("## What was tried", 1)[0]
    assert "payment: authentication failed: the database user was dropped" in why, body
    assert "another service's command" not in body


def assert_told_on_the_forge(repo: Path) -> None:
    """Every merged bot PR has its outcome comment once and no lock label; the dashboard
    issue exists and lists every incident (read through ``gitmedic prs`` and the forge)."""
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.reconciler.transaction import Journal

    listed = subprocess.run(
        [sys.executable, "-m", "gitmedic", "prs", str(repo), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    merged = [
        p
        for p in json.loads(listed)["prs"]
        if p["state"] == "merged" and p["branch"].startswith("gitmedic/")
    ]
    assert merged and not [p["number"] for p in merged if "gitmedic:writer-lock" in p["labels"]]
    forge = LocalForge(repo)
    for pr in merged:
        topics = [c.topic for c in forge.list_comments(pr["number"]) if c.topic]
        assert sum(t.startswith("txn/") for t in topics) == 1, (pr["branch"], topics)
    with forge.store.tx() as conn:
        rows = conn.execute("SELECT body FROM issues WHERE title = 'gitmedic dashboard'")
        (dashboard,) = [r["body"] for r in rows]
    incidents = Journal(repo.parent / "journal.sqlite").incidents("shop")
    assert len(incidents) == 4
    assert all(i.id in dashboard for i in incidents), dashboard
