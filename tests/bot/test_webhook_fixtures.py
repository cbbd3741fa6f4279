"""Webhook payloads held to GitHub's description, and handlers reading them as documented.

Every recorded fixture and every payload tests/bot/payloads.py builds from one
validates against ``@octokit/openapi-webhooks``; the handlers read the fields
GitHub documents as nullable (a run's branch and conclusion) or optional (an
edit's ``sender``) without turning null into the string "None" or raising.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest

from gitmedic.bot.service.webhook.handlers import (
    detector_run,
    on_check,
    on_issue_comment,
    on_pull_request,
    on_review,
)
from tests.bot import payloads
from tests.support.github_webhooks import webhook_description

FIXTURES = payloads.WEBHOOKS.parent
SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.json"))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_webhook_fixture_validates(path: Path) -> None:
    event = path.parent.name  # the folder is the X-GitHub-Event
    assert webhook_description().check(event, json.loads(path.read_text())) == []


def test_the_fixtures_cover_every_event_gitmedic_handles() -> None:
    from gitmedic.bot.service.webhook.handlers import HANDLERS

    events = {path.parent.name for path in _fixture_files()}
    assert set(HANDLERS) <= events


BUILT: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "pr_comment": ("issue_comment", lambda: payloads.pr_comment(3, "bob", "/gitmedic hold", 9)),
    "issue_comment": ("issue_comment", lambda: payloads.issue_comment("edited", 4, "b", "x", 9)),
    "pr_merged": ("pull_request", lambda: payloads.pr_merged(3, "bob", "carol", SHA, "fix")),
    "pr_event": ("pull_request", lambda: payloads.pr_event("synchronize", 3, "gitmedic[bot]")),
    "pr_edited": ("pull_request", lambda: payloads.pr_edited(3, "gitmedic[bot]", "bob", "a", "b")),
    "pr_edited_no_sender": (
        "pull_request",
        lambda: payloads.pr_edited(3, "gitmedic[bot]", None, "a", "b"),
    ),
    "issue_edited": (
        "issues",
        lambda: payloads.issue_edited(7, "gitmedic[bot]", "bob", "- [ ] a", "- [x] a"),
    ),
    "review": ("pull_request_review", lambda: payloads.review(3, "bob")),
    "push": ("push", lambda: payloads.push("refs/heads/main", SHA)),
    "tag_deleted": ("push", payloads.tag_deleted),
    "check_suite": ("check_suite", lambda: payloads.check_suite(SHA, 3)),
    "check_run": ("check_run", payloads.check_run),
    "workflow_run": ("workflow_run", lambda: payloads.workflow_run("detect", 3)),
    "ping": ("ping", payloads.ping),
    "installation": ("installation", payloads.installation),
    "star": ("star", payloads.star),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_every_built_payload_validates(name: str) -> None:
    event, build = BUILT[name]
    assert webhook_description().check(event, build()) == []


def test_a_malformed_payload_fails_validation() -> None:
    payload = payloads.installation()
    payload["installation"]["created_at"] = 1557933591  # an old recording's integer time
    del payload["installation"]["app_slug"]
    problems = webhook_description().check("installation", payload)
    assert "installation-suspend: 'app_slug' is a required property at /installation" in problems
    assert any("1557933591 is not of type 'string'" in p for p in problems)


# ----------------------------------------------------------------------------- handlers


def test_a_null_branch_and_conclusion_stay_null() -> None:
    payload = payloads.workflow_run("detect", 3)
    payload["workflow_run"].update(head_branch=None, conclusion=None)
    assert webhook_description().check("workflow_run", payload) == []  # GitHub allows both
    run = detector_run(payload)
    assert (run.branch, run.conclusion) == (None, None)
    deps = Mock()
    assert on_check(payload, deps) == "workflow_run 'detect': no conclusion"
    deps.actions.detector_run.assert_called_once_with(run)


def test_a_check_run_reads_its_suite_branch_when_it_has_none() -> None:
    payload = payloads.check_run()
    payload["check_run"]["check_suite"]["head_branch"] = None
    assert webhook_description().check("check_run", payload) == []
    assert detector_run(payload).branch is None
    assert detector_run(payloads.check_run()).branch == "changes"


def test_a_pr_edit_without_sender_does_not_raise() -> None:
    payload = payloads.pr_edited(3, "gitmedic[bot]", None, "- [ ] hold", "- [x] hold")
    deps = Mock()
    deps.bot_login = "gitmedic[bot]"
    assert on_pull_request(payload, deps) == "edit without a sender: controls ignored"
    deps.forge.get_permission.assert_not_called()


def test_null_users_and_a_null_merge_sha_are_read_as_documented() -> None:
    deps = Mock()
    comment = payloads.pr_comment(3, "bob", "/gitmedic merge", 9)
    comment["comment"]["user"] = None  # a deleted account's comment
    approval = payloads.review(3, "bob")
    approval["review"]["user"] = None
    merged = payloads.pr_merged(3, "bob", "carol", SHA, "fix")
    merged["pull_request"]["merge_commit_sha"] = None
    for event, payload in (("issue_comment", comment), ("pull_request_review", approval)):
        assert webhook_description().check(event, payload) == []
    assert on_issue_comment(comment, deps) == "comment by a deleted account: no command to answer"
    assert on_review(approval, deps) == "approval by a deleted account ignored"
    assert on_pull_request(merged, deps) == "#3 merged without a merge commit sha: not watched"
    assert deps.mock_calls == []  # nothing asked of the forge or the actions
