"""Real GitHub webhook payloads (tests/fixtures/data/github-webhooks), adapted to a local repo.

Each function loads one real delivery (``@octokit/webhooks-examples``) and rewrites,
in a copy, only what must point at the test's LocalForge repo (numbers, users,
bodies, shas, refs, a merge); every other field keeps its real shape, so the
handlers read what GitHub sends, and every builder's payload still validates
against GitHub's webhook description (tests/bot/test_webhook_fixtures.py).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from tests.conftest import DATA

WEBHOOKS = DATA / "github-webhooks" / "octokit-webhooks-examples"
REPO_NAME = "manifests"
OWNER = "alice"
MERGED_AT = "2019-05-15T15:21:02Z"

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
    """issue_comment created on a pull request: the example's issue, made a PR's."""
    payload = issue_comment("created", number, user, body, comment_id)
    html = f"https://github.com/{OWNER}/{REPO_NAME}/pull/{number}"
    payload["issue"]["pull_request"] = {
        "url": f"https://api.github.com/repos/{OWNER}/{REPO_NAME}/pulls/{number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "merged_at": None,
    }
    return payload


def issue_comment(action: str, number: int, user: str, body: str, comment_id: int) -> Payload:
    """issue_comment created/edited/deleted on a plain issue."""
    payload = load(f"issue_comment/{action}.json")
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment_id, body=body)
    _user(payload["comment"]["user"], user)
    _user(payload["sender"], user)
    return payload


def pr_merged(number: int, author: str, merged_by: str, merge_sha: str, head: str) -> Payload:
    """pull_request closed with merged=true: the closed example, merged by ``merged_by``."""
    payload = load("pull_request/closed.json")
    pr = payload["pull_request"]
    payload["number"] = number
    merger = copy.deepcopy(pr["user"])
    _user(merger, merged_by)
    pr.update(
        number=number,
        merged=True,
        merged_at=MERGED_AT,
        merge_commit_sha=merge_sha,
        merged_by=merger,
    )
    pr["head"]["ref"], pr["base"]["ref"] = head, "main"
    _user(pr["user"], author)
    _user(payload["sender"], merged_by)
    return payload


def pr_event(action: str, number: int, author: str) -> Payload:
    """pull_request opened/synchronize/labeled/closed (not merged)."""
    payload = load(f"pull_request/{action}.json")
    payload["number"] = number
    payload["pull_request"]["number"] = number
    _user(payload["pull_request"]["user"], author)
    return payload


def pr_edited(number: int, author: str, editor: str | None, before: str, after: str) -> Payload:
    """pull_request edited: the opened example with GitHub's ``changes`` for a body edit.

    ``editor=None``: a delivery without ``sender``, which GitHub's description allows.
    """
    payload = pr_event("opened", number, author)
    payload["action"] = "edited"
    payload["changes"] = {"body": {"from": before}}
    payload["pull_request"]["body"] = after
    if editor is None:
        del payload["sender"]
    else:
        _user(payload["sender"], editor)
    return payload


def issue_edited(number: int, author: str, editor: str, before: str, after: str) -> Payload:
    """issues edited: the edited example with GitHub's ``changes`` for a body edit (its
    description requires ``sender``, unlike a pull request's edit)."""
    payload = load("issues/edited.json")
    payload["issue"].update(number=number, body=after, title="gitmedic dashboard")
    _user(payload["issue"]["user"], author, "Bot" if author.endswith("[bot]") else "User")
    payload["changes"] = {"body": {"from": before}}
    _user(payload["sender"], editor)
    return payload


def review(number: int, reviewer: str, state: str = "approved") -> Payload:
    """pull_request_review submitted (the example's 'commented', given ``state``)."""
    payload = load("pull_request_review/submitted.json")
    payload["pull_request"]["number"] = number
    payload["review"]["state"] = state
    _user(payload["review"]["user"], reviewer)
    _user(payload["sender"], reviewer)
    return payload


def push(ref: str, after: str, deleted: bool = False) -> Payload:
    payload = load("push/branch-created.json")
    payload.update(ref=ref, after=after, deleted=deleted, created=False)
    return payload


def tag_deleted() -> Payload:
    return load("push/tag-deleted.json")


def check_suite(head_sha: str, pr: int) -> Payload:
    payload = load("check_suite/completed.json")
    payload["check_suite"]["head_sha"] = head_sha
    payload["check_suite"]["pull_requests"][0]["number"] = pr
    return payload


def check_run() -> Payload:
    """check_run completed with conclusion failure."""
    return load("check_run/completed.json")


def workflow_run(name: str, pr: int) -> Payload:
    payload = load("workflow_run/completed.with-pull-requests.json")
    payload["workflow"]["name"] = name
    for item in payload["workflow_run"]["pull_requests"]:
        item["number"] = pr
    return payload


def ping() -> Payload:
    return load("ping/ping.json")


def installation() -> Payload:
    return load("installation/suspend.json")


def star() -> Payload:
    """An event gitmedic does not handle."""
    return load("star/created.json")
