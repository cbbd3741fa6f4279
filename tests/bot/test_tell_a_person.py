"""Every failed or held transaction opens or updates the incident's issue on the forge; once
per transaction and phase; the issue says how it resolved and closes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gitmedic.bot.controller.tell import (
    close_resolved,
    issue_title,
    needs_telling,
    tell_held,
    told_key,
)
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.responder.incident import Incident
from gitmedic.reconciler.forge import IssueState
from gitmedic.reconciler.transaction import Phase, TxnState
from gitmedic.sim.faults.git import init_repo
from tests.transaction.fakes import plan

INCIDENT = Incident("inc-1", "shop", 0.0, ())


def _forge(tmp_path: Path) -> LocalForge:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "a.yaml").write_text("kind: ConfigMap\n")
    init_repo(repo)
    return LocalForge(repo)


def _state(phase: Phase, *, alarm: bool = False, reason: str = "") -> TxnState:
    proposal = {"diagnosis": "memory limit raised", "evidence": [{"detector": "pod-crashloop"}]}
    return TxnState(replace(plan(), proposal=proposal), phase, pr=7, alarm=alarm, reason=reason)


def test_a_failed_transaction_tells_a_person_what_happened_and_what_to_do(
    tmp_path: Path,
) -> None:
    forge = _forge(tmp_path)
    failed = _state(Phase.HELD, alarm=True, reason="the revert could not be merged: conflict")

    number = tell_held(forge, INCIDENT, failed)

    issue = forge.get_issue(number)
    assert issue.title == issue_title("inc-1") == "gitmedic: inc-1 needs a person"
    assert issue.state is IssueState.OPEN and "gitmedic" in issue.labels
    assert "ended **failed**" in issue.body and "PR #7" in issue.body
    assert "the revert could not be merged: conflict" in issue.body
    assert "memory limit raised" in issue.body and '"detector": "pod-crashloop"' in issue.body
    assert "`/gitmedic retry`" in issue.body


def test_a_held_transaction_updates_the_same_issue_and_says_how_to_approve(
    tmp_path: Path,
) -> None:
    forge = _forge(tmp_path)
    first = tell_held(forge, INCIDENT, _state(Phase.AWAITING_APPROVAL, reason="medium risk"))
    again = tell_held(forge, INCIDENT, _state(Phase.HELD, reason="a person's merge moved main"))

    assert first == again, "one issue per incident"
    body = forge.get_issue(again).body
    assert "ended **held**" in body and "a person's merge moved main" in body


def test_only_failed_held_and_waiting_transactions_are_told_once_per_phase() -> None:
    waiting = _state(Phase.AWAITING_APPROVAL)
    assert needs_telling(waiting) and needs_telling(_state(Phase.HELD))
    assert not needs_telling(_state(Phase.COMMITTED)) and not needs_telling(_state(Phase.MERGED))
    assert (
        told_key(waiting)
        != told_key(_state(Phase.HELD))
        != told_key(_state(Phase.HELD, alarm=True))
    )


def test_the_issue_says_how_the_incident_resolved_and_closes(tmp_path: Path) -> None:
    forge = _forge(tmp_path)
    number = tell_held(forge, INCIDENT, _state(Phase.AWAITING_APPROVAL))

    close_resolved(forge, number, "PR #7 committed: deployed and verified healthy.")
    close_resolved(forge, number, "told twice")

    issue = forge.get_issue(number)
    assert issue.state is IssueState.CLOSED
    assert issue.body.startswith("**Resolved:** PR #7 committed")
    assert "told twice" not in issue.body
