"""The PR anatomy end to end: ``gitmedic run --cluster sim --forge local --once`` in a
subprocess; the PRs found with ``gitmedic prs --json``, their bodies as the local forge
stores them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.bot.controller.tell import issue_title
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.reconciler.forge import Issue, NotFound
from tests.bot.cli_world import BOUTIQUE, SERVICE, prs, run_app, run_once, target_port_fault
from tests.bot.run_world import app_repo
from tests.bot.test_retry_extends import RELEASES, _release_in_two_commits
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

pytestmark = pytest.mark.integration


def test_a_fix_pr_shows_each_changed_field_with_its_value_before_and_after(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, BOUTIQUE)
    target_port_fault(repo, app, namespace)
    done = run_app(repo, app, namespace)
    assert done.rc in (0, 1), done.err
    fix = [p for p in prs(repo) if re.fullmatch(r"gitmedic/.+/attempt-1", p["branch"])]
    assert len(fix) == 1, [p["branch"] for p in prs(repo)]
    body = LocalForge(repo).get_pr(fix[0]["number"]).body  # as the forge stores it
    assert "### Changed fields" in body
    cells = rf"^\| (\S+) \| Service {namespace}/{SERVICE}: (\S+) \| (\S+) \| (\S+) \|$"
    row = re.search(cells, body, re.MULTILINE)
    assert row is not None, body
    file, field, before, after = row.groups()
    assert file.startswith(f"{app}/") and field.endswith("targetPort")
    assert before != after  # the faulty port on main, the one the container serves after


def shop_with_a_two_part_release(tmp_path: Path, extra: str = "") -> Path:
    """catalog's release lands as two commits, a new entrypoint then an image never pushed:
    restoring the image alone crash-loops, so attempt 1 is reverted and attempt 2 restores
    both (tests/bot/test_retry_extends.py tells the story in-process)."""
    repo = baseline_repo(tmp_path)
    healthy = git(repo, "rev-parse", "HEAD")  # the cluster ran this well
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(
        f"version: 1\napps:\n  - name: shop\n    path: {APP}\n    namespace: {NAMESPACE}\n"
        f"    engine: {{kind: sim}}\n    sim: {{known_good: {healthy}}}\n{extra}"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gitmedic: configuration")
    _release_in_two_commits(repo, repo / APP, *RELEASES["shop"][1][0])
    return repo


def test_a_revert_says_what_was_measured_and_the_retry_links_the_undone_attempt(
    tmp_path: Path,
) -> None:
    repo = shop_with_a_two_part_release(tmp_path)
    done = run_once(repo)
    assert done.rc in (0, 1), done.err
    listed = {p["branch"]: p["number"] for p in prs(repo) if not p["branch"].startswith("revert-")}
    reverts = [p["number"] for p in prs(repo) if p["branch"].startswith("revert-")]
    forge = LocalForge(repo)
    first = forge.get_pr(next(n for b, n in listed.items() if b.endswith("/attempt-1")))
    retry = forge.get_pr(next(n for b, n in listed.items() if b.endswith("/attempt-2")))
    (revert,) = [forge.get_pr(n) for n in reverts]

    assert revert.bot_state == {"reverts": first.number, "merge_sha": first.merge_sha}
    assert revert.body.startswith(f"Reverts #{first.number} (")
    assert "## What was measured" in revert.body and MU_EXPLAINED in revert.body
    before = re.search(rf"^\| before #{first.number} \| ([0-9.]+) \|$", revert.body, re.M)
    after = re.search(rf"^\| after #{first.number} \| ([0-9.]+) \|$", revert.body, re.M)
    assert before and after, revert.body  # both measured: the checkpoint and the last look
    # why it was undone: the crash loop the change caused, named in the verdict and the table
    assert re.search(r"^\*\*Verdict:\*\* failed fast: pod-crashloop ", revert.body, re.M)
    assert "| critical | pod-crashloop / " in revert.body

    assert "## Follows attempt 1\n\nThis retry follows attempt 1" in retry.body
    assert f"#{first.number}, reverted by #{revert.number}" in retry.body
    assert "**What the oracles found on" in retry.body and MU_EXPLAINED in retry.body


def test_an_escalation_issue_reads_in_sections_with_the_evidence_folded(tmp_path: Path) -> None:
    repo = shop_with_a_two_part_release(tmp_path, "attempts: 1\n")
    done = run_once(repo)
    assert done.rc in (0, 1), done.err
    (incident,) = done.json()["incidents"]
    body = escalation_issue(LocalForge(repo), incident["id"]).body
    heads = [line for line in body.splitlines() if line.startswith("## ")]
    assert heads == [
        "## What happened",
        "## What was tried",
        "## What a person should do",
        "## Evidence",
    ]
    (first,) = [p for p in prs(repo) if re.fullmatch(r"gitmedic/.+/attempt-1", p["branch"])]
    assert re.search(rf"^\| 1 \| #{first['number']} \(reverted by #\d+\) \| ", body, re.M)
    assert "all 1 attempt(s) were undone" in body and MU_EXPLAINED in body
    assert body.count("<details><summary>") == body.count("</details>") >= 1
    assert len(body) < 65_536


def escalation_issue(forge: LocalForge, incident: str) -> Issue:
    """The incident's issue (the local forge numbers issues and PRs in one sequence)."""
    for number in range(1, 50):
        try:
            issue = forge.get_issue(number)
        except NotFound:
            continue
        if issue.title == issue_title(incident):
            return issue
    raise AssertionError(f"no issue for {incident}")
