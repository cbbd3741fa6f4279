"""LocalForge's plain-row verbs: comments, statuses, labels, issues, permissions.

A mixin of :class:`~gitmedic.bot.forges.local.LocalForge` (which owns the repo, the
store and the bot's login); each verb is one store transaction. Limits mirror
GitHub's so that code which works here does not fail there: label names of at
most 50 characters, status descriptions of at most 140.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from gitmedic.bot.forges import _git, _store
from gitmedic.bot.forges._store import Store
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

MAX_LABEL = 50
MAX_DESCRIPTION = 140


def check_title(title: str) -> None:
    if not title.strip():
        raise Validation("an issue needs a non-empty title")


def check_status(context: str, description: str) -> None:
    """Validation for a status every forge would refuse (GitHub's limits)."""
    if not context.strip():
        raise Validation("a status needs a non-empty context")
    if len(description) > MAX_DESCRIPTION:
        raise Validation(f"status description is over {MAX_DESCRIPTION} characters")


class ItemVerbs:
    repo: Path
    store: Store
    bot: str
    url_prefix: str

    # ------------------------------------------------------------------ comments

    def ensure_comment(self, number: int, topic: str, body: str) -> Comment:
        full = markers.topic_body(topic, body)
        with self.store.tx() as conn:
            for comment in self._comments(conn, number):
                if comment.author == self.bot and comment.topic == topic:
                    if comment.body != full:
                        update = "UPDATE comments SET body = ? WHERE id = ?"
                        conn.execute(update, (full, comment.id))
                    return replace(comment, body=full)
            return self._add_comment(conn, number, self.bot, full)

    def list_comments(self, number: int) -> tuple[Comment, ...]:
        with self.store.tx() as conn:
            return self._comments(conn, number)

    def comment_as(self, user: str, number: int, body: str) -> Comment:
        """A comment written by a person (e.g. ``/gitmedic approve``)."""
        with self.store.tx() as conn:
            self._check_item(conn, number)
            return self._add_comment(conn, number, user, body)

    # ------------------------------------------------------------------ statuses

    def set_status(
        self,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str | None = None,
    ) -> CommitStatus:
        check_status(context, description)
        status = CommitStatus(self._commit(sha), context, state, description, target_url)
        with self.store.tx() as conn:
            _store.upsert_status(conn, status)
        return status

    def get_statuses(self, sha: str) -> tuple[CommitStatus, ...]:
        full = self._commit(sha)
        with self.store.tx() as conn:
            return _store.statuses_of(conn, full)

    # ------------------------------------------------------------------ labels

    def add_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]:
        wanted = check_labels(labels)
        with self.store.tx() as conn:
            self._check_item(conn, number)
            _store.add_labels(conn, number, wanted)
            return _store.labels_of(conn, number)

    def remove_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]:
        unwanted = tuple(labels)
        with self.store.tx() as conn:
            self._check_item(conn, number)
            _store.remove_labels(conn, number, unwanted)
            return _store.labels_of(conn, number)

    # ------------------------------------------------------------------ issues

    def ensure_issue(
        self,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> Issue:
        wanted = check_labels(labels)
        check_title(title)
        with self.store.tx() as conn:
            number = self._bot_issue(conn, title)
            if number is None:
                number = _store.new_number(conn, "issue")
                conn.execute(
                    "INSERT INTO issues VALUES (?, ?, ?, 'open', ?)",
                    (number, title, markers.render_body(body, state), self.bot),
                )
            else:
                self._update_issue(conn, number, body, state)
            _store.add_labels(conn, number, wanted)
            return self._issue(conn, number)

    def get_issue(self, number: int) -> Issue:
        with self.store.tx() as conn:
            return self._issue(conn, number)

    def close_issue(self, number: int) -> Issue:
        with self.store.tx() as conn:
            self._issue(conn, number)
            conn.execute("UPDATE issues SET state = 'closed' WHERE number = ?", (number,))
            return self._issue(conn, number)

    # ------------------------------------------------------------------ permissions

    def get_permission(self, user: str) -> Permission:
        with self.store.tx() as conn:
            return _store.permission_of(conn, user)

    def set_permission(self, user: str, permission: Permission) -> None:
        with self.store.tx() as conn:
            _store.set_permission(conn, user, permission)

    # ------------------------------------------------------------------ internals

    def _check_item(self, conn: sqlite3.Connection, number: int) -> None:
        if _store.kind_of(conn, number) is None:
            raise NotFound(f"#{number} is neither a pull request nor an issue")

    def _comments(self, conn: sqlite3.Connection, number: int) -> tuple[Comment, ...]:
        self._check_item(conn, number)
        rows = conn.execute("SELECT * FROM comments WHERE number = ? ORDER BY id", (number,))
        return tuple(_comment(row, self.bot) for row in rows)

    def _add_comment(self, conn: sqlite3.Connection, number: int, user: str, body: str) -> Comment:
        self._check_item(conn, number)
        cursor = conn.execute(
            "INSERT INTO comments (number, author, body) VALUES (?, ?, ?)", (number, user, body)
        )
        row = conn.execute("SELECT * FROM comments WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return _comment(row, self.bot)

    def _commit(self, sha: str) -> str:
        full = _git.resolve(self.repo, sha) if sha and not sha.startswith("-") else None
        if full is None:
            raise Validation(f"no commit found for sha {sha!r}")
        return full

    def _bot_issue(self, conn: sqlite3.Connection, title: str) -> int | None:
        """The bot's issue of this title: the newest open one, else the newest closed."""
        rows = conn.execute(
            "SELECT number, body FROM issues WHERE title = ? AND author = ?"
            " ORDER BY state = 'open' DESC, number DESC",
            (title, self.bot),
        )
        for row in rows:
            if markers.has_bot_marker(row["body"]):
                return int(row["number"])
        return None

    def _update_issue(
        self,
        conn: sqlite3.Connection,
        number: int,
        body: str,
        state: Mapping[str, object] | None,
    ) -> None:
        issue = self._issue(conn, number)
        if markers.needs_body_update(issue.body, body, state):
            rendered = markers.render_body(body, state)
            conn.execute("UPDATE issues SET body = ? WHERE number = ?", (rendered, number))
        conn.execute("UPDATE issues SET state = 'open' WHERE number = ?", (number,))

    def _issue(self, conn: sqlite3.Connection, number: int) -> Issue:
        row = conn.execute("SELECT * FROM issues WHERE number = ?", (number,)).fetchone()
        if row is None:
            raise NotFound(f"issue #{number} does not exist")
        return Issue(
            number=number,
            title=row["title"],
            body=row["body"],
            state=IssueState(row["state"]),
            labels=_store.labels_of(conn, number),
            author=row["author"],
            url=f"{self.url_prefix}/issues/{number}",
            bot_state=markers.extract_state(row["body"]) if row["author"] == self.bot else None,
        )


def _comment(row: sqlite3.Row, bot: str) -> Comment:
    body = str(row["body"])
    return Comment(
        id=int(row["id"]),
        number=int(row["number"]),
        author=str(row["author"]),
        body=body,
        topic=markers.extract_topic(body) if row["author"] == bot else None,
    )


def check_labels(labels: Iterable[str]) -> tuple[str, ...]:
    checked = tuple(labels)
    for label in checked:
        if not label.strip() or len(label) > MAX_LABEL:
            raise Validation(f"label {label!r} must be 1-{MAX_LABEL} characters, not blank")
    return checked
