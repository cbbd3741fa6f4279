"""Runtime levers end to end, through the real ``gitmedic`` command (sim cluster, local forge).

The sim of each process shows the runtime fault named in ``GITMEDIC_SIM_FAULTS``:
nothing in Git holds it. An OOM kill with a harmless env commit on top gets a
raise-the-limit PR, not a revert of that commit; a lever is ``medium``, so under
the built-in policy it waits for a person, who is told in the incident's issue,
and ``/gitmedic approve`` lets it merge, deploy and verify. A policy that allows
levers lets a restart of wedged pods through on its own.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import IssueState, Permission
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot.cli_world import configured_repo, git, prs, run_once, serving, until
from tests.responder.levers.world import debug_env

pytestmark = pytest.mark.integration

LEVERS_ALLOWED = (
    "policy:\n  auto_merge: low\n  rules:\n"
    "    - {risk: low, description: runtime levers, strategies: [lever]}\n"
)
MANIFEST = "apps/online-boutique/kubernetes-manifests.yaml"


def lever_run(repo: Path, rc: int, status: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``run --once`` ending with ``rc`` and one incident whose first transaction is a lever
    that ended ``status``: (the incident, that transaction)."""
    done = run_once(repo)
    assert done.rc == rc and "Traceback" not in done.err, done.err
    (incident,) = done.json()["incidents"]
    (txn, *_) = incident["transactions"]
    assert (txn["status"], txn["strategy"]) == (status, "lever")
    return incident, txn


def test_an_oom_under_a_harmless_env_commit_gets_a_limit_raise_a_person_approves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, app, _ = configured_repo(tmp_path, "")
    harmless = debug_env(repo, app, "cartservice")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "memory-growth:cartservice")

    incident, txn = lever_run(repo, 1, "held")

    assert len(incident["transactions"]) == 1
    forge = LocalForge(repo)
    fix = forge.get_pr(txn["pr"])
    assert "raise-memory-limit" in fix.body and "128Mi -> 256Mi" in fix.body
    assert "bounded by the configured ceiling" in fix.body
    assert "no policy rule matched (default: medium)" in fix.body
    assert git(repo, "rev-parse", "main") == harmless, "nothing merged without a person"
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    row = journal.incident(incident["id"])
    assert row is not None and isinstance(row.data.get("issue"), int), "a person is told"
    issue = forge.get_issue(row.data["issue"])
    assert issue.title == f"gitmedic: {incident['id']} needs a person"
    assert "is **held**" in issue.body and f"PR #{txn['pr']}" in issue.body
    assert "`/gitmedic approve`" in issue.body

    forge.set_permission("maria", Permission.MAINTAIN)
    with serving(repo) as served:
        assert served.comment(txn["pr"], "maria", "/gitmedic approve", 5101).status_code == 202
        assert until(lambda: journal.transactions()[0].phase.terminal, 240), "never verified"
        assert until(lambda: _closed(forge, issue.number), 60), "the issue stays open"
    state = journal.transactions()[0]
    assert state.phase is Phase.COMMITTED, state.reason
    manifest = git(repo, "show", f"main:{MANIFEST}")
    assert "memory: 256Mi" in manifest, "the limit is raised on main"
    assert "name: LOG_LEVEL" in manifest, "the harmless commit is not reverted"
    assert "**Resolved:**" in forge.get_issue(issue.number).body


def test_wedged_pods_are_restarted_by_an_annotation_when_the_policy_allows_levers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, LEVERS_ALLOWED)
    before = git(repo, "show", f"HEAD:{MANIFEST}")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "wedge:productcatalogservice")

    _, txn = lever_run(repo, 0, "committed")

    assert txn["mu_before"] > 0 and txn["mu_after"] == 0
    after = git(repo, "show", f"main:{MANIFEST}")
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(changed) == 2, "the restart is the annotation and nothing else"
    assert changed[0] == "+      annotations:"
    assert changed[1].startswith("+        gitmedic.io/restartedAt: ")
    assert prs(repo)[0]["state"] == "merged"


def test_an_unknown_runtime_fault_is_a_usage_error_that_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, "")
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "meteor-strike:cartservice")

    done = run_once(repo)

    assert done.rc == 2 and "GITMEDIC_SIM_FAULTS: unknown runtime fault 'meteor-strike'" in done.err
    assert git(repo, "rev-parse", "HEAD") == head and prs(repo) == []


def _closed(forge: LocalForge, number: int) -> bool:
    return forge.get_issue(number).state is IssueState.CLOSED
