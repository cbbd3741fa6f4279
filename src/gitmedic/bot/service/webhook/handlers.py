"""What each GitHub event means to gitmedic: one handler per event, one map from event to handler.

Handlers read only the payload fields they need and return a short result for
the log and the delivery record. Each is idempotent: commands skip what they
already answered, the actions are idempotent verbs.

- ``issue_comment`` (created): comment commands (:mod:`gitmedic.bot.commands.dispatch`).
- ``issues`` (edited): a box ticked on the dashboard issue -> the same command
  (:mod:`gitmedic.bot.service.dashboard_desk`); without a dashboard (``deps.dashboard``): nothing.
- ``pull_request``: closed and merged by a person, touching a watched app's
  paths -> ``watch_merge`` (verify non-regression, offer a revert if it
  regressed). Edited by a person with write access on a gitmedic PR, ticking a
  control checkbox -> ``retry`` / ``hold``. Other actions: nothing (the gate
  re-runs through the workflow on ``synchronize``).
- ``pull_request_review`` submitted ``approved`` by a writer -> ``approve``.
- ``check_suite`` / ``check_run`` / ``workflow_run`` completed -> ``detector_run``.
- ``push`` to the default branch -> ``main_moved``; tags and other branches: nothing.
- ``installation``, ``ping``: logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.commands.actions import BotActions, DetectorRun
from gitmedic.bot.commands.dispatch import CommentEvent, handle_comment
from gitmedic.bot.render.pr_body import newly_checked
from gitmedic.bot.service.dashboard_desk import DashboardDesk, DashboardEdit, handle_edit
from gitmedic.reconciler.forge import BOT_LOGIN, Forge, Permission

log = logging.getLogger(__name__)

Payload = Mapping[str, Any]
ChangedFiles = Callable[[str], tuple[str, ...]]  # merge sha -> files it changed


@dataclass(frozen=True)
class Deps:
    forge: Forge
    actions: BotActions
    changed_files: ChangedFiles
    watched_paths: tuple[str, ...]  # app folders, relative to the repo root
    bot_login: str = BOT_LOGIN
    dashboard: DashboardDesk | None = None  # serve's apps' dashboards; None: no boxes to act on


Handler = Callable[[Payload, Deps], str]


def on_ping(payload: Payload, deps: Deps) -> str:
    return "pong"


def on_installation(payload: Payload, deps: Deps) -> str:
    installation = payload.get("installation") or {}
    account = (installation.get("account") or {}).get("login", "?")
    return f"installation {payload.get('action')} {installation.get('id')} for {account}"


def on_issue_comment(payload: Payload, deps: Deps) -> str:
    issue, comment = payload["issue"], payload["comment"]
    if _login(comment.get("user")) is None:  # nullable: a deleted account ("ghost")
        return "comment by a deleted account: no command to answer"
    event = CommentEvent(
        action=str(payload["action"]),
        number=int(issue["number"]),
        is_pull_request="pull_request" in issue,
        comment_id=int(comment["id"]),
        author=str(comment["user"]["login"]),
        body=str(comment.get("body") or ""),
    )
    replies = handle_comment(deps.forge, deps.actions, event, deps.bot_login)
    return "commands answered in one reply" if replies else "no command to answer"


def on_issues(payload: Payload, deps: Deps) -> str:
    if payload.get("action") != "edited":
        return f"issues {payload.get('action')}: nothing to do"
    if deps.dashboard is None:
        return "no dashboard is kept here"
    issue = payload["issue"]
    edit = DashboardEdit(
        number=int(issue["number"]),
        issue_author=_login(issue.get("user")),
        sender=_login(payload.get("sender")),
        before=_text((((payload.get("changes") or {}).get("body")) or {}).get("from")),
        after=str(issue.get("body") or ""),
    )
    return handle_edit(deps.forge, deps.actions, deps.dashboard, edit, deps.bot_login)


def on_pull_request(payload: Payload, deps: Deps) -> str:
    action, pr = payload["action"], payload["pull_request"]
    if action == "closed" and pr.get("merged"):
        return _merged(pr, deps)
    if action == "edited" and pr["user"]["login"] == deps.bot_login:
        return _edited(payload, deps)
    return f"pull_request {action}: nothing to do"


def _merged(pr: Payload, deps: Deps) -> str:
    number, sha = int(pr["number"]), _text(pr.get("merge_commit_sha"))
    if sha is None:  # nullable in GitHub's description: nothing to watch by
        log.warning("#%s was merged without a merge commit sha: not watched", number)
        return f"#{number} merged without a merge commit sha: not watched"
    merger = (pr.get("merged_by") or {}).get("login", "")
    if deps.bot_login in (pr["user"]["login"], merger):
        return f"#{number} is gitmedic's: its transaction verifies it"
    files = deps.changed_files(sha)
    if not any(_under(f, p) for f in files for p in deps.watched_paths):
        return f"#{number} touches no watched app"
    deps.actions.watch_merge(number, sha)
    return f"watching #{number} at {sha[:12]}"


def _edited(payload: Payload, deps: Deps) -> str:
    before = (((payload.get("changes") or {}).get("body")) or {}).get("from")
    if before is None:
        return "edit without a body change"
    sender = _login(payload.get("sender"))
    if sender is None:  # GitHub's description lets a delivery omit it: nobody to check
        return "edit without a sender: controls ignored"
    ticked = newly_checked(str(before), str(payload["pull_request"].get("body") or ""))
    if not ticked:
        return "no control ticked"
    if deps.forge.get_permission(sender) < Permission.WRITE:
        return f"{sender} may not use the controls"
    number = int(payload["pull_request"]["number"])
    for control in sorted(ticked):  # hold before retry
        getattr(deps.actions, control)(number)
    return f"controls {', '.join(sorted(ticked))} on #{number}"


def on_review(payload: Payload, deps: Deps) -> str:
    review, number = payload["review"], int(payload["pull_request"]["number"])
    if payload["action"] != "submitted" or str(review["state"]).lower() != "approved":
        return "review without approval"
    reviewer = _login(review.get("user"))
    if reviewer is None:  # nullable: a deleted account cannot approve
        return "approval by a deleted account ignored"
    if deps.forge.get_permission(reviewer) < Permission.WRITE:
        return f"approval by {reviewer} without write permission ignored"
    deps.actions.approve(number)
    return f"#{number} approved by {reviewer}"


def on_check(payload: Payload, deps: Deps) -> str:
    if payload.get("action") != "completed":
        return f"{payload.get('action')}: nothing to do"
    run = detector_run(payload)
    deps.actions.detector_run(run)
    return f"{run.source} {run.name!r}: {run.conclusion or 'no conclusion'}"


def detector_run(payload: Payload) -> DetectorRun:
    for source in ("workflow_run", "check_run", "check_suite"):
        if source in payload:
            item = payload[source]
            break
    else:
        raise KeyError("no check_suite, check_run or workflow_run in the payload")
    return DetectorRun(
        source=source,
        name=_run_name(source, item, payload),
        head_sha=str(item["head_sha"]),
        # both nullable in GitHub's description: a fork's or a tag's run has no branch
        branch=_text(item.get("head_branch") or (item.get("check_suite") or {}).get("head_branch")),
        conclusion=_text(item.get("conclusion")),
        url=str(item.get("html_url") or item.get("url") or ""),
        pull_requests=tuple(int(p["number"]) for p in item.get("pull_requests") or ()),
    )


def _run_name(source: str, item: Payload, payload: Payload) -> str:
    if source == "workflow_run":
        return str((payload.get("workflow") or {}).get("name") or item["name"])
    if source == "check_run":
        return str(item["name"])
    return str((item.get("app") or {}).get("slug") or "check suite")


def on_push(payload: Payload, deps: Deps) -> str:
    default = (payload.get("repository") or {}).get("default_branch") or deps.forge.default_branch()
    if payload.get("deleted") or payload["ref"] != f"refs/heads/{default}":
        return f"push to {payload['ref']}: nothing to do"
    deps.actions.main_moved(str(payload["after"]))
    return f"{default} moved to {str(payload['after'])[:12]}"


HANDLERS: dict[str, Handler] = {
    "ping": on_ping,
    "installation": on_installation,
    "issue_comment": on_issue_comment,
    "issues": on_issues,
    "pull_request": on_pull_request,
    "pull_request_review": on_review,
    "check_suite": on_check,
    "check_run": on_check,
    "workflow_run": on_check,
    "push": on_push,
}


def _login(user: object) -> str | None:
    """A user object's login; ``None`` for a null user (a deleted account)."""
    login = user.get("login") if isinstance(user, Mapping) else None
    return None if login is None else str(login)


def _text(value: object) -> str | None:
    """A nullable string field as GitHub documents it: ``None`` stays ``None``."""
    return None if value is None else str(value)


def _under(path: str, folder: str) -> bool:
    folder = folder.strip("/")
    return not folder or path == folder or path.startswith(folder + "/")
