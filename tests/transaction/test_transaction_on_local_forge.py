"""Transactions end to end on a real LocalForge repo: real PRs, gate, merges and reverts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter, StatusState
from gitmedic.reconciler.transaction import Outcome, Phase, TxnState
from tests.transaction.e2e_world import APP, git, make_repo, plan, run

ROOT = Path(__file__).parents[2]


def catalog_port(repo: Path, rev: str = "main") -> str:
    text = git(repo, "show", f"{rev}:{APP}/catalog.yaml")
    return next(line.split(":")[1].strip() for line in text.splitlines() if "targetPort" in line)


def test_a_correct_fix_is_merged_deployed_verified_and_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    state = run(repo, tmp_path / "j.sqlite", plan(repo, "good"))
    assert state.outcome is Outcome.COMMITTED, state.reason
    assert catalog_port(repo) == "3550"
    forge = LocalForge(repo)
    (pr,) = forge.list_prs(PrFilter.ALL)
    assert pr.merge_sha == state.merge_sha
    (gate,) = forge.get_statuses(pr.head_sha)
    assert (gate.context, gate.state) == ("gitmedic/gate", StatusState.SUCCESS)
    diff = git(repo, "diff", f"{state.plan.base_sha}..main")
    assert "-      targetPort: 3551\n+      targetPort: 3550" in diff
    assert diff.count("\n+") == 1 + 1  # the +++ header and the one changed line


def test_the_writer_lock_shows_on_the_pr_and_the_outcome_is_commented(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    seen: list[tuple[str, ...]] = []

    def look(state: TxnState) -> None:
        if state.pr is not None:
            seen.append(LocalForge(repo).get_pr(state.pr).labels)

    state = run(repo, tmp_path / "j.sqlite", plan(repo, "good"), on_record=look)
    assert seen and all("gitmedic:writer-lock" in labels for labels in seen[:-1]), seen
    forge = LocalForge(repo)
    assert "gitmedic:writer-lock" not in forge.get_pr(state.pr or 0).labels
    (comment,) = forge.list_comments(state.pr or 0)
    assert "ended **committed**" in comment.body and comment.topic == "txn/inc-1/good"


def test_a_person_merging_to_main_first_gets_the_pr_rebased_and_regated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)

    def someone_commits(state: TxnState) -> None:
        if state.phase is Phase.PR_OPENED and state.regates == 0:
            cart = repo / APP / "cart.yaml"
            cart.write_text(cart.read_text().replace("replicas: 1", "replicas: 2", 1))
            git(repo, "commit", "-qam", "cart: two replicas")

    state = run(repo, tmp_path / "j.sqlite", plan(repo, "good"), on_record=someone_commits)
    assert state.outcome is Outcome.COMMITTED, state.reason
    assert catalog_port(repo) == "3550"
    assert "replicas: 2" in git(repo, "show", f"main:{APP}/cart.yaml"), "the person's change stays"
    (pr,) = LocalForge(repo).list_prs(PrFilter.ALL)
    assert git(repo, "log", "--format=%s", "-1", f"{pr.head_sha}^") == "cart: two replicas"


def test_a_change_landing_during_verification_holds_the_transaction(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)

    def someone_commits(state: TxnState) -> None:
        entered = state.records[-1]  # the record entering synced, not a measurement after it
        if entered.phase is Phase.SYNCED and "measurement" not in entered.data:
            cart = repo / APP / "cart.yaml"
            cart.write_text(cart.read_text().replace("replicas: 1", "replicas: 2", 1))
            git(repo, "commit", "-qam", "cart: two replicas")

    state = run(repo, tmp_path / "j.sqlite", plan(repo, "good"), on_record=someone_commits)
    assert state.outcome is Outcome.HELD
    assert state.reason == "inconclusive: another change landed during verification"
    assert catalog_port(repo) == "3550", "held, not reverted: a person decides"


def test_a_fix_that_breaks_at_runtime_is_reverted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    state = run(repo, tmp_path / "j.sqlite", plan(repo, "broken-image", mu_pre=5.0))
    # The manifests are right (the gate passes); the new image crash-loops after deploy.
    assert state.outcome is Outcome.REVERTED
    assert state.reason.startswith("verification failed: oracles Failed")
    assert any("critical finding" in line for line in state.feedback)
    assert catalog_port(repo) == "3551", "main is back to where it was before the change"
    forge = LocalForge(repo)
    prs = forge.list_prs(PrFilter.ALL)
    assert [p.state.value for p in prs] == ["merged", "merged"]
    assert prs[1].bot_state == {"reverts": prs[0].number, "merge_sha": state.merge_sha}


def test_a_fix_that_adds_a_finding_is_rejected_by_the_gate(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    bad = plan(repo, "good")
    edit = {**bad.edits[0], "path": "spec.selector.app", "value": "catalogue"}
    from dataclasses import replace

    state = run(repo, tmp_path / "j.sqlite", replace(bad, edits=(edit,)))
    assert state.outcome is Outcome.REJECTED
    assert state.reason.startswith("gate failed: new finding service-selector-unmatched")
    (pr,) = LocalForge(repo).list_prs(PrFilter.ALL)
    assert pr.state.value == "open" and catalog_port(repo) == "3551"


def test_a_sync_that_never_finishes_is_reverted_after_the_timeout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    state = run(repo, tmp_path / "j.sqlite", plan(repo, "good"), never_sync=True)
    assert state.outcome is Outcome.FAILED and state.alarm, "the revert cannot deploy either"
    assert state.reason.startswith("the revert ")
    assert catalog_port(repo) == "3551", "the change was reverted on main"


def crash_run(
    repo: Path, journal: Path, fix: str, kill_after: int
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.transaction.e2e_world",
            str(repo),
            str(journal),
            fix,
            str(kill_after),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.integration
@pytest.mark.parametrize(
    ("fix", "steps"), [("good", 5), ("broken-image", 9)], ids=["commit-path", "revert-path"]
)
def test_a_kill_after_any_step_resumes_to_the_same_end(
    tmp_path: Path, fix: str, steps: int
) -> None:
    for kill_after in range(1, steps):
        repo = make_repo(tmp_path / f"k{kill_after}")
        journal = tmp_path / f"k{kill_after}" / "journal.sqlite"
        killed = crash_run(repo, journal, fix, kill_after)
        assert killed.returncode == -9, killed.stderr
        resumed = crash_run(repo, journal, fix, 0)
        assert resumed.returncode == 0, resumed.stderr
        final = json.loads(resumed.stdout.strip().splitlines()[-1])
        prs = LocalForge(repo).list_prs(PrFilter.ALL)
        merges = git(repo, "rev-list", "--merges", "--count", "main")
        if fix == "good":
            assert final["status"] == "committed" and len(prs) == 1 and merges == "1"
            assert catalog_port(repo) == "3550"
        else:
            assert final["status"] == "reverted" and len(prs) == 2 and merges == "2"
            assert catalog_port(repo) == "3551", "never a merged regression left unreverted"
