"""GitHubForge's plain verbs: comments, statuses or check runs, labels, issues, permissions.

Statuses are kept one per (sha, context) the way GitHub shows them: the latest
status of a context wins, so ``set_status`` posts only when the latest differs.
With ``checks=True`` the bot's statuses are check runs named by context instead
(``in_progress`` for pending; conclusions ``success``, ``failure`` and, for an
error, ``cancelled``), updated in place; ``get_statuses`` reads both kinds, so
statuses other tools set (CI's check runs) are seen either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from gitmedic.bot.forges._github_api import labels_of, quote_all, raise_failure, verb
from gitmedic.bot.forges._github_fit import BODY_TOPIC, Fitting, split, unlinked
from gitmedic.bot.forges._items import check_labels, check_status, check_title
from gitmedic.bot.forges._retry import Failure
from gitmedic.reconciler import forge_markers as markers
from gitmedic.reconciler.forge import (
    Comment,
    CommitStatus,
    Issue,
    IssueState,
    NotFound,
    Permission,
    StatusState,
    Validation,
)

_CHECK_OF = {
    StatusState.PENDING: ("in_progress", None),
    StatusState.SUCCESS: ("completed", "success"),
    StatusState.FAILURE: ("completed", "failure"),
    StatusState.ERROR: ("completed", "cancelled"),
}
_STATE_OF_CONCLUSION = {
    "success": StatusState.SUCCESS,
    "neutral": StatusState.SUCCESS,
    "skipped": StatusState.SUCCESS,
    "failure": StatusState.FAILURE,
    "action_required": StatusState.FAILURE,
}


class GitHubItems(Fitting):
    # ------------------------------------------------------------------ comments

    @verb
    def ensure_comment(self, number: int, topic: str, body: str) -> Comment:
        full = markers.topic_body(topic, body)
        for comment in self.list_comments(number):
            if comment.author == self.bot and comment.topic == topic:
                fitted = self.fitted(number, full, topic, comment.body)
                if comment.body != fitted:
                    self.request("PATCH", f"/issues/comments/{comment.id}", body={"body": fitted})
                return Comment(comment.id, number, self.bot, fitted, topic)
        fitted = self.fitted(number, full, topic)  # its parts first: the note links to them
        made = self.request("POST", f"/issues/{number}/comments", body={"body": fitted})
        return self._comment(made, number)

    @verb
    def list_comments(self, number: int) -> tuple[Comment, ...]:
        self.raw_issue(number)
        raws = self.pages(f"/issues/{number}/comments")
        return tuple(self._comment(raw, number) for raw in raws)

    # ------------------------------------------------------------------ statuses

    @verb
    def set_status(
        self,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str | None = None,
    ) -> CommitStatus:
        check_status(context, description)
        if self.checks:
            return self._set_check(sha, context, state, description, target_url)
        full, latest = self._statuses(sha)
        wanted = CommitStatus(full, context, state, description, target_url)
        if latest.get(context) != wanted:
            body = {"state": state.value, "context": context, "description": description}
            if target_url is not None:  # an absent input, never null (GitHub: 422)
                body["target_url"] = target_url
            self.request("POST", f"/statuses/{full}", body=body)
        return wanted

    @verb
    def get_statuses(self, sha: str) -> tuple[CommitStatus, ...]:
        full, latest = self._statuses(sha)
        latest.update({name: status for name, (_, status) in self._checks(full).items()})
        return tuple(latest[context] for context in sorted(latest))

    def _statuses(self, sha: str) -> tuple[str, dict[str, CommitStatus]]:
        combined = self.get_or_none(f"/commits/{quote_all(sha)}/status") if sha else None
        if combined is None:
            raise Validation(f"no commit found for sha {sha!r}")
        full = str(combined["sha"])
        return full, {raw["context"]: _status(full, raw) for raw in combined["statuses"]}

    def _checks(self, full: str, name: str | None = None) -> dict[str, tuple[int, CommitStatus]]:
        params = {"check_name": name} if name else {}
        runs = self.pages(f"/commits/{full}/check-runs", params)
        latest: dict[str, tuple[int, CommitStatus]] = {}
        for run in sorted(runs, key=lambda r: int(r["id"])):
            latest[run["name"]] = (int(run["id"]), _check_status(full, run))
        return latest

    def _set_check(
        self, sha: str, context: str, state: StatusState, description: str, url: str | None
    ) -> CommitStatus:
        full, _ = self._statuses(sha)
        wanted = CommitStatus(full, context, state, description, url)
        found = self._checks(full, context).get(context)
        if found is not None and _same_check(found[1], wanted):
            return wanted
        status, conclusion = _CHECK_OF[state]
        body: dict[str, Any] = {
            "name": context,
            "status": status,
            "output": {"title": description or context, "summary": description},
        }
        # absent, never null: GitHub answers "details_url": null with 422
        if url is not None:
            body["details_url"] = url
        if conclusion is not None:
            body["conclusion"] = conclusion
        if found is None:
            self.request("POST", "/check-runs", body={**body, "head_sha": full})
        else:
            self.request("PATCH", f"/check-runs/{found[0]}", body=body)
        return wanted

    # ------------------------------------------------------------------ labels

    @verb
    def add_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]:
        wanted = check_labels(labels)
        if not wanted:
            return labels_of(self.raw_issue(number))
        result = self.post_labels(number, list(wanted))
        return tuple(sorted(str(label["name"]) for label in result))

    @verb
    def remove_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]:
        current = set(labels_of(self.raw_issue(number)))
        for label in set(labels) & current:
            path = f"/issues/{number}/labels/{quote_all(label)}"
            result = self.attempt(lambda path=path: self.request("DELETE", path))  # type: ignore[misc]
            if isinstance(result, Failure) and result.status != 404:  # 404: removed meanwhile
                raise_failure(result, f"unlabelling #{number}")
            current.discard(label)
        return tuple(sorted(current))

    # ------------------------------------------------------------------ issues

    @verb
    def ensure_issue(
        self,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> Issue:
        wanted = check_labels(labels)
        check_title(title)
        rendered = markers.render_body(body, state)
        issue = self._bot_issue(title)
        if issue is None:
            first = {"title": title, "body": split(rendered).text(None), "labels": list(wanted)}
            issue = self._issue(self.request("POST", "/issues", body=first))
            if not unlinked(issue.body):
                return issue
        edits: dict[str, Any] = {}
        if markers.needs_body_update(issue.body, body, state) or unlinked(issue.body):
            edits["body"] = self.fitted(issue.number, rendered, BODY_TOPIC, issue.body)
        if issue.state is not IssueState.OPEN:
            edits["state"] = "open"
        if set(wanted) - set(issue.labels):
            edits["labels"] = sorted(set(wanted) | set(issue.labels))
        if not edits:
            return issue
        return self._issue(self.request("PATCH", f"/issues/{issue.number}", body=edits))

    @verb
    def get_issue(self, number: int) -> Issue:
        raw = self.raw_issue(number)
        if raw.get("pull_request") is not None:
            raise NotFound(f"issue #{number} does not exist (#{number} is a pull request)")
        return self._issue(raw)

    @verb
    def close_issue(self, number: int) -> Issue:
        issue = self.get_issue(number)
        if issue.state is IssueState.CLOSED:
            return issue
        return self._issue(self.request("PATCH", f"/issues/{number}", body={"state": "closed"}))

    # ------------------------------------------------------------------ permissions

    @verb
    def get_permission(self, user: str) -> Permission:
        raw = self.get_or_none(f"/collaborators/{quote_all(user)}/permission")
        if raw is None:
            return Permission.NONE  # GitHub: 404 for a user who is not a collaborator
        try:
            return Permission.parse(str(raw.get("role_name") or raw["permission"]))
        except ValueError:  # a custom role: its base permission
            return Permission.parse(str(raw["permission"]))

    # ------------------------------------------------------------------ internals

    def raw_issue(self, number: int) -> dict[str, Any]:
        raw = self.get_or_none(f"/issues/{number}")
        if raw is None:
            raise NotFound(f"#{number} is neither a pull request nor an issue")
        return dict(raw)

    def _bot_issue(self, title: str) -> Issue | None:
        """The bot's issue of this title: the newest open one, else the newest closed."""
        raws = self.pages("/issues", {"state": "all", "creator": self.bot})
        found = [
            self._issue(raw)
            for raw in raws
            if raw.get("pull_request") is None
            and raw["title"] == title
            and raw["user"]["login"] == self.bot
            and markers.has_bot_marker(raw.get("body") or "")
        ]
        found.sort(key=lambda issue: (issue.state is IssueState.OPEN, issue.number))
        return found[-1] if found else None

    def _issue(self, raw: Mapping[str, Any]) -> Issue:
        author, body = str(raw["user"]["login"]), str(raw.get("body") or "")
        return Issue(
            number=int(raw["number"]),
            title=str(raw["title"]),
            body=body,
            state=IssueState(raw["state"]),
            labels=labels_of(raw),
            author=author,
            url=str(raw["html_url"]),
            bot_state=markers.extract_state(body) if author == self.bot else None,
        )

    def _comment(self, raw: Mapping[str, Any], number: int) -> Comment:
        author, body = str(raw["user"]["login"]), str(raw.get("body") or "")
        topic = markers.extract_topic(body) if author == self.bot else None
        return Comment(int(raw["id"]), number, author, body, topic)


def _same_check(found: CommitStatus, wanted: CommitStatus) -> bool:
    if wanted.target_url is None:  # none given: GitHub shows the App's homepage instead
        return replace(found, target_url=None) == wanted
    return found == wanted


def _status(sha: str, raw: Mapping[str, Any]) -> CommitStatus:
    return CommitStatus(
        sha,
        str(raw["context"]),
        StatusState(raw["state"]),
        str(raw.get("description") or ""),
        raw.get("target_url"),
    )


def _check_status(sha: str, run: Mapping[str, Any]) -> CommitStatus:
    if run.get("status") != "completed":
        state = StatusState.PENDING
    else:
        state = _STATE_OF_CONCLUSION.get(str(run.get("conclusion")), StatusState.ERROR)
    summary = (run.get("output") or {}).get("summary") or ""
    return CommitStatus(sha, str(run["name"]), state, str(summary), run.get("details_url"))
