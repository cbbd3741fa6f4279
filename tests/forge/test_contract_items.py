"""The forge contract, part 2: comments, statuses, labels, issues, permissions."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.forge import (
    BOT_LOGIN,
    IssueState,
    Permission,
    StatusState,
    Validation,
)
from gitmedic.reconciler.forge_markers import strip_markers
from tests.forge.backends import Backend, open_fix

DASHBOARD = "gitmedic dashboard"


def test_ensure_comment_keeps_one_comment_per_topic(backend: Backend) -> None:
    number = open_fix(backend)
    first = backend.forge.ensure_comment(number, "gate", "gate: running")
    assert backend.forge.ensure_comment(number, "gate", "gate: running") == first
    updated = backend.forge.ensure_comment(number, "gate", "gate: passed")
    other = backend.forge.ensure_comment(number, "verify", "verifying")
    comments = backend.forge.list_comments(number)
    assert [(c.id, c.topic) for c in comments] == [(first.id, "gate"), (other.id, "verify")]
    assert updated.id == first.id
    assert comments[0].body.endswith("\ngate: passed")
    assert comments[0].author == BOT_LOGIN


def test_a_persons_comment_is_never_taken_for_a_bot_topic(backend: Backend) -> None:
    number = open_fix(backend)
    bot = backend.forge.ensure_comment(number, "gate", "ok")
    person = backend.comment_as("mallory", number, bot.body)
    assert person.topic is None
    assert backend.forge.ensure_comment(number, "gate", "still ok").id == bot.id
    bodies = {c.id: c.body for c in backend.forge.list_comments(number)}
    assert bodies[person.id] == bot.body


@pytest.mark.parametrize("topic", ["", "has space", "-->", "x" * 101])
def test_ensure_comment_rejects_bad_topics(backend: Backend, topic: str) -> None:
    number = open_fix(backend)
    with pytest.raises(Validation, match="topic"):
        backend.forge.ensure_comment(number, topic, "body")
    assert backend.forge.list_comments(number) == ()


def test_set_status_keeps_one_status_per_sha_and_context(backend: Backend) -> None:
    number = open_fix(backend)
    sha = backend.forge.get_pr(number).head_sha
    forge = backend.forge
    first = forge.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating")
    assert forge.set_status(sha, "gitmedic/gate", StatusState.PENDING, "gating") == first
    forge.set_status(sha, "gitmedic/gate", StatusState.SUCCESS, "passed", "https://ci/1")
    forge.set_status(sha, "ci/lint", StatusState.FAILURE, "lint failed")
    assert [(s.context, s.state, s.description, s.target_url) for s in forge.get_statuses(sha)] == [
        ("ci/lint", StatusState.FAILURE, "lint failed", None),
        ("gitmedic/gate", StatusState.SUCCESS, "passed", "https://ci/1"),
    ]
    assert backend.reopen().get_statuses(sha) == forge.get_statuses(sha)


def test_set_status_rejects_bad_input(backend: Backend) -> None:
    sha = backend.branch_sha("main")
    assert sha is not None
    with pytest.raises(Validation, match="no commit"):
        backend.forge.set_status("f" * 40, "gitmedic/gate", StatusState.SUCCESS)
    with pytest.raises(Validation, match="140"):
        backend.forge.set_status(sha, "gitmedic/gate", StatusState.SUCCESS, "x" * 141)
    with pytest.raises(Validation, match="context"):
        backend.forge.set_status(sha, " ", StatusState.SUCCESS)
    assert backend.forge.get_statuses(sha) == ()


def test_labels_add_and_remove_idempotently(backend: Backend) -> None:
    number = open_fix(backend)
    all_three = ("gitmedic", "hold", "risk:low")
    assert backend.forge.add_labels(number, ["hold", "risk:low"]) == all_three
    assert backend.forge.add_labels(number, ["hold"]) == all_three
    assert backend.forge.remove_labels(number, ["hold", "absent"]) == ("gitmedic", "risk:low")
    assert backend.forge.remove_labels(number, ["hold"]) == ("gitmedic", "risk:low")
    with pytest.raises(Validation, match="label"):
        backend.forge.add_labels(number, ["x" * 51])
    assert backend.forge.get_pr(number).labels == ("gitmedic", "risk:low")


def test_ensure_issue_keeps_one_dashboard(backend: Backend) -> None:
    forge = backend.forge
    issue = forge.ensure_issue(DASHBOARD, "no incidents", ["gitmedic"], {"v": 1})
    assert forge.ensure_issue(DASHBOARD, "no incidents", ["gitmedic"], {"v": 1}) == issue
    assert (issue.state, issue.labels, issue.bot_state) == (
        IssueState.OPEN,
        ("gitmedic",),
        {"v": 1},
    )
    updated = forge.ensure_issue(DASHBOARD, "1 incident", (), {"v": 2})
    assert updated.number == issue.number
    assert strip_markers(updated.body) == "1 incident"
    assert forge.close_issue(issue.number).state is IssueState.CLOSED
    reopened = forge.ensure_issue(DASHBOARD, "1 incident", (), {"v": 2})
    assert (reopened.number, reopened.state) == (issue.number, IssueState.OPEN)
    assert backend.reopen().ensure_issue(DASHBOARD, "1 incident", (), {"v": 2}) == reopened


def test_issue_and_pr_numbers_share_one_sequence(backend: Backend) -> None:
    issue = backend.forge.ensure_issue(DASHBOARD, "body")
    number = open_fix(backend)
    assert number > issue.number
    backend.forge.ensure_comment(issue.number, "summary", "on the issue")
    assert [c.topic for c in backend.forge.list_comments(issue.number)] == ["summary"]
    assert backend.forge.list_comments(number) == ()
    assert backend.forge.add_labels(issue.number, ["dash"]) == ("dash",)


def test_permissions_are_ordered_and_default_to_none(backend: Backend) -> None:
    forge = backend.forge
    assert forge.get_permission(backend.owner) is Permission.ADMIN
    assert forge.get_permission("stranger") is Permission.NONE
    backend.grant("bob", Permission.TRIAGE)
    backend.grant("carol", Permission.MAINTAIN)
    assert forge.get_permission("bob") < Permission.WRITE <= forge.get_permission("carol")
    assert backend.reopen().get_permission("carol") is Permission.MAINTAIN
