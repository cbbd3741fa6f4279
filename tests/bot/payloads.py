"""Real GitHub webhook payloads (tests/fixtures/data/github-webhooks), adapted to a local repo.

Each function loads one recorded delivery and rewrites, in a copy, only what
must point at the test's LocalForge repo (numbers, users, bodies, shas, refs);
every other field keeps its real shape, so the handlers read what GitHub sends.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from tests.conftest import DATA

WEBHOOKS = DATA / "github-webhooks"
REPO_NAME = "manifests"
OWNER = "alice"

Payload = dict[str, Any]


@cache
def _load(relative: str) -> Payload:
    loaded: Payload = json.loads((WEBHOOKS / relative).read_text())
    return loaded


def load(relative: str) -> Payload:
    payload = copy.deepcopy(_load(relative))
    repo = payload.get("repository")
    if isinstance(repo, dict):
        repo.update(name=REPO_NAME, full_name=f"{OWNER}/{REPO_NAME}", default_branch="main")
    return payload


def _user(user: dict[str, Any], login: str, kind: str = "User") -> None:
    user.update(login=login, type=kind)


def pr_comment(number: int, user: str, body: str, comment_id: int) -> Payload:
    """issue_comment created on a pull request (go-playground's recorded PR comment)."""
    payload = load("go-playground-webhooks/pull-request-issue-comment.json")
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment_id, body=body)
    _user(payload["comment"]["user"], user)
    _user(payload["sender"], user)
    return payload


def issue_comment(action: str, number: int, user: str, body: str, comment_id: int) -> Payload:
    """issue_comment created/edited/deleted on a plain issue (octokit's examples)."""
    payload = load(f"octokit-webhooks/issue_comment/{action}.payload.json")
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment_id, body=body)
    _user(payload["comment"]["user"], user)
    _user(payload["sender"], user)
    return payload


def pr_merged(number: int, author: str, merged_by: str, merge_sha: str, head: str) -> Payload:
    """pull_request closed with merged=true (a real 2018 delivery)."""
    payload = load("delete-merged-branch/pull-request.closed.json")
    pr = payload["pull_request"]
    payload["number"] = number
    pr.update(number=number, merge_commit_sha=merge_sha)
    pr["head"]["ref"], pr["base"]["ref"] = head, "main"
    _user(pr["user"], author)
    _user(pr["merged_by"], merged_by)
    _user(payload["sender"], merged_by)
    return payload


def pr_event(action: str, number: int, author: str) -> Payload:
    """pull_request opened/synchronize/labeled/closed (not merged), octokit's examples."""
    payload = load(f"octokit-webhooks/pull_request/{action}.payload.json")
    payload["number"] = number
    payload["pull_request"]["number"] = number
    _user(payload["pull_request"]["user"], author)
    return payload


def pr_edited(number: int, author: str, editor: str, before: str, after: str) -> Payload:
    """pull_request edited: octokit's opened example with GitHub's ``changes`` for an edit."""
    payload = pr_event("opened", number, author)
    payload["action"] = "edited"
    payload["changes"] = {"body": {"from": before}}
    payload["pull_request"]["body"] = after
    _user(payload["sender"], editor)
    return payload


def review(number: int, reviewer: str, state: str = "approved") -> Payload:
    """pull_request_review submitted (go-playground's approval; octokit's is 'commented')."""
    payload = load("go-playground-webhooks/pull-request-review.json")
    payload["pull_request"]["number"] = number
    payload["review"]["state"] = state
    _user(payload["review"]["user"], reviewer)
    _user(payload["sender"], reviewer)
    return payload


def push(ref: str, after: str, deleted: bool = False) -> Payload:
    payload = load("octokit-webhooks/push/with-new-branch.payload.json")
    payload.update(ref=ref, after=after, deleted=deleted, created=False)
    return payload


def tag_deleted() -> Payload:
    return load("octokit-webhooks/push/payload.json")


def check_suite(head_sha: str, pr: int) -> Payload:
    payload = load("octokit-webhooks/check_suite/completed.payload.json")
    payload["check_suite"]["head_sha"] = head_sha
    payload["check_suite"]["pull_requests"][0]["number"] = pr
    return payload


def check_run(conclusion_file: str = "completed.1") -> Payload:
    return load(f"octokit-webhooks/check_run/{conclusion_file}.payload.json")


def workflow_run(name: str, pr: int) -> Payload:
    payload = load("octokit-webhooks/workflow_run/completed.with-pull-requests.payload.json")
    payload["workflow"]["name"] = name
    for item in payload["workflow_run"]["pull_requests"]:
        item["number"] = pr
    return payload


def ping() -> Payload:
    return load("octokit-webhooks/ping/with-app_id.payload.json")


def installation() -> Payload:
    return load("octokit-webhooks/installation/created.payload.json")


def repository_dispatch() -> Payload:
    return load("octokit-webhooks/repository_dispatch/payload.json")
