"""The team's merge policy is law, end to end through the real ``gitmedic`` command.

``policy: {auto_merge: never, rules: []}`` merges nothing without a person: the
fix PR waits with its body saying why and what approves it, and
``/gitmedic approve`` (a signed webhook to ``gitmedic serve``) lets it merge,
deploy and verify. Memory PRs carry the ``gitmedic/gate`` status and follow the
same policy. A merge the forge refuses leaves the PR waiting with the reason on
it; the process ends normally.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import Permission
from gitmedic.reconciler.transaction import Journal, Phase, TxnState
from tests.bot.cli_world import (
    NEVER,
    configured_repo,
    git,
    prs,
    run_once,
    serving,
    target_port_fault,
    until,
)

pytestmark = pytest.mark.integration


def test_auto_merge_never_merges_nothing_and_approve_lets_the_fix_proceed(tmp_path: Path) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    fault = target_port_fault(repo, app, namespace)

    done = run_once(repo)

    assert done.rc == 1 and "Traceback" not in done.err, done.err
    ((txn,),) = [i["transactions"] for i in done.json()["incidents"]]
    assert txn["status"] == "held"
    (pr,) = prs(repo)
    assert pr["state"] == "open" and pr["number"] == txn["pr"]
    assert git(repo, "rev-parse", "main") == fault, "main is untouched"
    body = LocalForge(repo).get_pr(pr["number"]).body
    assert "auto_merge: never -> hold for a human" in body, "the body says why it waits"
    assert "`/gitmedic approve`" in body, "and what approves it"

    LocalForge(repo).set_permission("maria", Permission.MAINTAIN)
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    with serving(repo) as served:
        reply = served.comment(pr["number"], "maria", "/gitmedic approve", 4101)
        assert reply.status_code == 202
        assert until(lambda: fix(journal).phase.terminal, 240), "never verified"
    # The fix; the tick that commits it goes on to remember it (its memory PR, no fix).
    state = fix(journal)
    assert [t.plan.txn_id for t in journal.transactions() if t.plan.strategy != "memory"] == [
        state.plan.txn_id
    ]
    assert state.phase is Phase.COMMITTED, state.reason
    (merged,) = [p for p in prs(repo) if p["number"] == state.pr]
    assert merged["state"] == "merged" and merged["merge_sha"] == state.merge_sha
    assert git(repo, "rev-parse", "main") == state.merge_sha
    assert git(repo, "rev-list", "--count", f"{fault}..main") == "2", "the fix and its merge"


def test_memory_prs_carry_the_gate_status_and_follow_the_policy(tmp_path: Path) -> None:
    """Fixes restored from history may merge here; memory has no rule, so it is medium."""
    fixes_only = (
        "policy:\n  auto_merge: low\n  rules:\n"
        "    - {risk: low, description: restores, strategies: [playbook, bisect]}\n"
    )
    repo, app, namespace = configured_repo(tmp_path, fixes_only)
    target_port_fault(repo, app, namespace)

    done = run_once(repo)

    assert done.rc == 0 and "Traceback" not in done.err, done.err
    fix, memory = prs(repo)
    assert fix["state"] == "merged"
    assert memory["branch"].endswith("/memory") and memory["state"] == "open"
    gate = {s["context"]: s for s in memory["statuses"]}["gitmedic/gate"]
    assert gate["state"] == "success" and "the memory guard passes" in gate["description"]
    body = LocalForge(repo).get_pr(memory["number"]).body
    assert "no policy rule matched" in body and "`/gitmedic approve`" in body
    assert not git(repo, "log", "main", "--format=%s", "--grep", "memory")


def test_a_merge_the_local_forge_refuses_leaves_the_pr_waiting_with_the_reason(
    tmp_path: Path,
) -> None:
    """main is checked out with an uncommitted edit to the file the fix changes, so the
    local forge cannot fast-forward it: the merge is refused, as GitHub refuses one
    that branch protection blocks."""
    repo, app, namespace = configured_repo(tmp_path, "")
    fault = target_port_fault(repo, app, namespace)
    manifest = next((repo / app).glob("*.yaml"))
    manifest.write_text(manifest.read_text() + "# a person's edit, not committed yet\n")

    done = run_once(repo)

    assert done.rc == 1 and "Traceback" not in done.err, done.err
    ((txn,),) = [i["transactions"] for i in done.json()["incidents"]]
    assert txn["status"] == "held"
    (pr,) = prs(repo)
    assert pr["state"] == "open" and git(repo, "rev-parse", "main") == fault
    (state,) = Journal(repo / ".git" / "gitmedic" / "journal.sqlite").transactions()
    assert state.phase is Phase.AWAITING_APPROVAL
    assert state.reason.startswith("merge refused: ") and "fast-forward" in state.reason
    comments = [c.body for c in LocalForge(repo).list_comments(pr["number"])]
    assert any("could not merge" in c and "fast-forward" in c for c in comments)


@pytest.mark.parametrize(
    ("status", "message"),
    [(405, 'Required status check "ci/build" is expected.'), (409, "Head branch was modified.")],
)
def test_a_merge_github_refuses_leaves_the_pr_waiting_with_the_reason(
    tmp_path: Path, status: int, message: str
) -> None:
    """The GitHub adapter answers 405/409 on merge (served over real HTTP by the
    stand-in): past the bounded re-gates, the transaction waits in awaiting-approval
    and GitHub's reason is on the PR; nothing is raised."""
    from typing import cast

    from gitmedic.bot.forges.github import GitHubForge
    from gitmedic.reconciler.transaction import MachineConfig, Record, TxnState, advance
    from gitmedic.reconciler.transaction.forge_ports import ForgePorts
    from tests.support.github_standin import shared_server
    from tests.support.github_store import Fault, GitHubStore
    from tests.transaction.e2e_world import APP, make_repo, plan

    work = make_repo(tmp_path / "work")
    bare = tmp_path / "github.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    store = GitHubStore(git_dir=bare)
    token = "ghp_" + "policy0test0token00000000000000000000"
    forge = GitHubForge(store.full_name, token=token, base_url=shared_server().use(store))
    base = store.git("rev-parse", "main").strip()
    txn = plan(work, "good")
    head = forge.commit_files(txn.branch, base, {f"{APP}/cart.yaml": "kind: ConfigMap\n"}, "fix")
    pr = forge.ensure_pr(txn.branch, "main", txn.title, "body", ["gitmedic"], state={"txn": "t"})
    store.faults.append(Fault("PUT", "/merge", status, message=message, times=1000))
    ports = ForgePorts(forge, lambda file, rev: "", cast(Any, None), cast(Any, None),
                       cast(Any, None), main_head=lambda: base)  # fmt: skip
    config = MachineConfig(max_regates=0)  # re-gating is bounded; the bound is reached
    gated = [Record(1, Phase.PR_OPENED, 0.0, {"pr": pr.number, "head_sha": head}),
             Record(2, Phase.GATED, 1.0, {"head_sha": head, "gated_base": base})]  # fmt: skip
    state = TxnState.fold(txn, gated)

    step = advance(state, ports, 2.0, config)

    assert step.record is not None and step.record.phase is Phase.AWAITING_APPROVAL
    assert step.record.data["reason"].startswith("merge refused: ")
    assert forge.get_pr(pr.number).state.value == "open"
    comments = [c.body for c in forge.list_comments(pr.number)]
    assert any("could not merge" in c and "The PR waits" in c for c in comments), comments
    waiting = state.apply(step.record)
    again = advance(waiting, ports, 62.0, config)
    assert again.record is None and again.wait_s == config.approval_poll_s, "waits, retries"


def fix(journal: Journal) -> TxnState:
    """The one fix of the journal (a memory PR's transaction may follow it)."""
    (state,) = [t for t in journal.transactions() if t.plan.strategy != "memory"]
    return state
