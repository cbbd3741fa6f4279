"""LocalForge: pull requests inside the git repository itself, no server.

The embedded default forge (``gitmedic demo``, ``run --forge local``) and the test
forge. A PR is its head branch ``refs/heads/<branch>`` plus a ref
``refs/gitmedic/pr/<n>`` pinning its head (so a PR's commits survive the deletion
of its branch, like GitHub's ``refs/pull/<n>/head``); everything else (numbers,
titles, bodies, labels, comments, statuses, issues, permissions) lives in
``.git/gitmedic/forge.sqlite`` (see :mod:`._store`).

Git semantics follow GitHub's: merging writes a real ``--no-ff`` merge commit (or a
squash commit) onto the base branch; a revert is a real revert commit on the branch
``revert-<n>-<branch>`` plus a PR. Both are computed with plumbing (see
:mod:`._history`), so a conflict leaves nothing behind. When the base branch is
checked out, its work tree is fast-forwarded to stay in sync; uncommitted changes to
other files are kept, and the merge is refused when they touch the merged files.
Reads notice what happened in git meanwhile, as GitHub does: an open PR whose
branch was deleted is closed, one whose head reached its base otherwise is merged.

Besides the :class:`~gitmedic.reconciler.forge.Forge` verbs it offers what people
do on a forge (``comment_as``, ``edit_body``, ``open_pr_as``, ``set_permission``),
for the demo and for tests.
"""

from __future__ import annotations

import getpass
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.forges import _commit, _git, _history, _store
from gitmedic.bot.forges._git import Identity
from gitmedic.bot.forges._items import ItemVerbs, check_labels
from gitmedic.bot.forges._store import PR_COLUMNS, Store
from gitmedic.reconciler import forge_markers as markers
from gitmedic.reconciler.forge import (
    BOT_LOGIN,
    HeadMoved,
    Issue,
    MergeMethod,
    NotFound,
    NotMergeable,
    PrFilter,
    PrState,
    PullRequest,
    Validation,
    revert_branch_name,
)
from gitmedic.reconciler.outbound import scrubbed_forge

if TYPE_CHECKING:
    from gitmedic.reconciler.forge import Forge

DB_NAME = "gitmedic/forge.sqlite"
BOT_IDENTITY = Identity(BOT_LOGIN, "gitmedic-bot@users.noreply.localhost")


@scrubbed_forge  # every writing verb redacts its text first
class LocalForge(ItemVerbs):
    """The forge verbs over one local repository (bare or with work trees)."""

    def __init__(
        self,
        path: Path | str,
        *,
        owner: str | None = None,
        base: str | None = None,
        create: bool = True,
        bot: str = BOT_LOGIN,
        identity: Identity = BOT_IDENTITY,
    ) -> None:
        """Open the forge of the repo containing ``path``.

        ``owner`` (admin; default: git's ``user.name`` or the OS user) and ``base``
        (the default branch; default: ``main``, ``master`` or HEAD's branch) are
        recorded when the forge is first created. ``create=False``: NotFound
        instead of creating the metadata file.
        """
        store = Store(forge_database(path))
        self.repo = store.path.parent.parent
        if not store.exists():
            if not create:
                raise NotFound(f"{path} has no local forge yet ({store.path} is absent)")
            store.initialise(owner or _default_owner(self.repo), base or _guess_base(self.repo))
        self.store, self.bot, self.identity = store, bot, identity
        # The work tree of a non-bare repo, else the bare repo itself: what readers of
        # the manifests (the loop, the sim) open, where ``repo`` is the git directory.
        self.root = self.repo.parent if self.repo.name == ".git" else self.repo
        self.url_prefix = self.root.resolve().as_uri()

    def default_branch(self) -> str:
        with self.store.tx() as conn:
            return _store.meta(conn, "base")

    # ------------------------------------------------------------------ pull requests

    def ensure_pr(
        self,
        branch: str,
        base: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> PullRequest:
        wanted = check_labels(labels)
        rendered = markers.render_body(body, state)  # Validation for non-JSON state
        with self.store.tx() as conn:
            existing = self._row_by_branch(conn, branch)
            if existing is None:
                head = self._new_pr_head(branch, base)
                number = self._insert_pr(conn, branch, base, title, rendered, head, self.bot)
                _store.add_labels(conn, number, wanted)
                return self._pr(conn, number)
            pr = self._refresh(conn, existing)
            if pr.state is PrState.OPEN and pr.author == self.bot:
                self._update_open(conn, pr, base, title, body, state)
                _store.add_labels(conn, pr.number, wanted)
            return self._pr(conn, pr.number)

    def get_pr(self, number: int) -> PullRequest:
        with self.store.tx() as conn:
            return self._refresh(conn, self._row(conn, number))

    def find_pr(self, branch: str) -> PullRequest | None:
        with self.store.tx() as conn:
            row = self._row_by_branch(conn, branch)
            return None if row is None else self._refresh(conn, row)

    def list_prs(self, which: PrFilter = PrFilter.OPEN) -> tuple[PullRequest, ...]:
        with self.store.tx() as conn:
            rows = conn.execute(f"SELECT {PR_COLUMNS} FROM prs ORDER BY number").fetchall()
            refs = _git.Refs.read(self.repo, {row["base"] for row in rows})
            prs = [self._refresh(conn, row, refs) for row in rows]
        return tuple(pr for pr in prs if which.admits(pr.state))

    def find_prs(
        self, match: Mapping[str, object], which: PrFilter = PrFilter.ALL
    ) -> tuple[PullRequest, ...]:
        wanted = markers.normalise_state(match).items()
        return tuple(
            pr
            for pr in self.list_prs(which)
            if pr.bot_state is not None and wanted <= pr.bot_state.items()
        )

    def close_pr(self, number: int) -> PullRequest:
        with self.store.tx() as conn:
            pr = self._refresh(conn, self._row(conn, number))
            if pr.state is PrState.MERGED:
                raise Validation(f"PR #{number} is merged; a merged PR cannot be closed")
            self._set(conn, number, state=PrState.CLOSED.value)
            return self._pr(conn, number)

    def merge(
        self, number: int, expected_head_sha: str, method: MergeMethod = MergeMethod.MERGE
    ) -> str:
        with self.store.tx() as conn:
            pr = self._refresh(conn, self._row(conn, number))
            if pr.state is PrState.MERGED and pr.head_sha == expected_head_sha:
                assert pr.merge_sha is not None
                return pr.merge_sha  # merged by an earlier call: say so again
            if pr.state is not PrState.OPEN:
                raise NotMergeable(f"PR #{number} is {pr.state.value}; only open PRs merge")
            if pr.head_sha != expected_head_sha:
                raise HeadMoved(
                    f"PR #{number}'s head is {pr.head_sha[:12]}, not the expected "
                    f"{expected_head_sha[:12]}: re-check it before merging"
                )
            merged = self._advance_base(pr, method)
            self._set(conn, number, state=PrState.MERGED.value, merge_sha=merged)
            return merged

    def revert_pr(self, number: int) -> PullRequest:
        with self.store.tx() as conn:
            pr = self._refresh(conn, self._row(conn, number))
            if pr.state is not PrState.MERGED:
                raise Validation(f"PR #{number} is {pr.state.value}; only merged PRs revert")
            branch = revert_branch_name(pr)
            existing = self._row_by_branch(conn, branch)
            if existing is not None:
                return self._refresh(conn, existing)
            base_tip = self._base_tip(pr.base)
            commit = _history.revert_commit(self.repo, pr, base_tip, self.identity)
            _git.update_ref(self.repo, f"refs/heads/{branch}", commit, None, "gitmedic: revert")
            # (a branch left by a crash before its PR row was written is overwritten)
            body = markers.render_body(
                f"Reverts #{number}.", {"reverts": number, "merge_sha": pr.merge_sha}
            )
            title = f'Revert "{pr.title}"'
            created = self._insert_pr(conn, branch, pr.base, title, body, commit, self.bot)
            return self._pr(conn, created)

    def delete_branch(self, branch: str) -> None:
        with self.store.tx() as conn:
            if branch == _store.meta(conn, "base"):
                raise Validation(f"{branch} is the default branch; it is never deleted")
            checked_out = _git.worktree_of(self.repo, branch)
            if checked_out is not None:
                raise Validation(f"branch {branch} is checked out in {checked_out}")
            if _git.branch_sha(self.repo, branch) is None:
                return
            _git.delete_ref(self.repo, f"refs/heads/{branch}")
            row = self._row_by_branch(conn, branch)
            if row is not None:
                self._refresh(conn, row)

    def commit_files(
        self, branch: str, base_sha: str, files: Mapping[str, str | None], message: str
    ) -> str:
        with self.store.tx() as conn:
            base = _store.meta(conn, "base")
            return _commit.commit_files(self.repo, branch, base_sha, files, message, base)

    # ------------------------------------------------------------------ what people do

    def open_pr_as(self, user: str, branch: str, base: str, title: str, body: str) -> PullRequest:
        """A PR opened by a person (Validation if the branch already has one)."""
        with self.store.tx() as conn:
            if self._row_by_branch(conn, branch) is not None:
                raise Validation(f"a pull request for branch {branch} already exists")
            head = self._new_pr_head(branch, base)
            return self._pr(conn, self._insert_pr(conn, branch, base, title, body, head, user))

    def edit_body(self, number: int, body: str) -> PullRequest:
        """Replace a PR's body as a person editing it on the forge would."""
        with self.store.tx() as conn:
            self._row(conn, number)
            self._set(conn, number, body=body)
            return self._pr(conn, number)

    def edit_issue_body(self, number: int, body: str) -> Issue:
        """Replace an issue's body as a person editing it (ticking a box) would."""
        with self.store.tx() as conn:
            self._issue(conn, number)
            conn.execute("UPDATE issues SET body = ? WHERE number = ?", (body, number))
            return self._issue(conn, number)

    # ------------------------------------------------------------------ internals

    def _new_pr_head(self, branch: str, base: str) -> str:
        if branch.startswith("-") or not _git.valid_branch_name(self.repo, branch):
            raise Validation(f"{branch!r} is not a valid branch name")
        head = _git.branch_sha(self.repo, branch)
        if head is None:
            raise Validation(f"head branch {branch} does not exist; push it first")
        base_tip = self._base_tip(base)
        if _git.is_ancestor(self.repo, head, base_tip):
            raise Validation(f"no commits between {base} and {branch}")
        return head

    def _base_tip(self, base: str) -> str:
        tip = _git.branch_sha(self.repo, base)
        if tip is None:
            raise Validation(f"base branch {base} does not exist")
        return tip

    def _insert_pr(
        self,
        conn: sqlite3.Connection,
        branch: str,
        base: str,
        title: str,
        body: str,
        head: str,
        author: str,
    ) -> int:
        number = _store.new_number(conn, "pr")
        conn.execute(
            f"INSERT INTO prs ({PR_COLUMNS}) VALUES (?, ?, ?, ?, ?, 'open', ?, NULL, ?)",
            (number, branch, base, title, body, head, author),
        )
        self._pin(number, head)
        return number

    def _update_open(
        self,
        conn: sqlite3.Connection,
        pr: PullRequest,
        base: str,
        title: str,
        body: str,
        state: Mapping[str, object] | None,
    ) -> None:
        if base != pr.base:
            self._base_tip(base)
            self._set(conn, pr.number, base=base)
        if title != pr.title:
            self._set(conn, pr.number, title=title)
        if markers.needs_body_update(pr.body, body, state):
            self._set(conn, pr.number, body=markers.render_body(body, state))

    def _advance_base(self, pr: PullRequest, method: MergeMethod) -> str:
        """Write the merge commit and move the base to it; nothing moves on failure."""
        base_tip = self._base_tip(pr.base)
        merged = _history.merge_commit(self.repo, pr, base_tip, method, self.identity)
        worktree = _git.worktree_of(self.repo, pr.base)
        if worktree is not None:
            if not _git.fast_forward_worktree(worktree, merged):
                raise NotMergeable(
                    f"cannot fast-forward {pr.base} checked out in {worktree}: it has "
                    "uncommitted changes to files this merge changes, or it moved"
                )
        elif not _git.update_ref(
            self.repo, f"refs/heads/{pr.base}", merged, base_tip, f"gitmedic: merge PR #{pr.number}"
        ):
            raise NotMergeable(f"{pr.base} moved while PR #{pr.number} was merging; try again")
        return merged

    def _refresh(
        self, conn: sqlite3.Connection, row: sqlite3.Row, refs: _git.Refs | None = None
    ) -> PullRequest:
        """The PR after noticing branch deletions, pushes and outside merges."""
        number, branch, base = int(row["number"]), row["branch"], row["base"]
        if row["state"] != PrState.OPEN.value:
            return self._pr(conn, number)
        refs = refs or _git.Refs.read(self.repo, [base])
        tip = refs.tips.get(branch)
        if tip is None:
            self._set(conn, number, state=PrState.CLOSED.value)
            return self._pr(conn, number)
        if tip != row["head_sha"]:
            self._set(conn, number, head_sha=tip)
            self._pin(number, tip)
        if branch in refs.contained.get(base, ()):
            merged = _git.merged_by(self.repo, tip, refs.tips[base])
            self._set(conn, number, state=PrState.MERGED.value, merge_sha=merged)
        return self._pr(conn, number)

    def _pin(self, number: int, head: str) -> None:
        _git.update_ref(self.repo, f"refs/gitmedic/pr/{number}", head, None, "gitmedic: PR head")

    def _set(self, conn: sqlite3.Connection, number: int, **values: str) -> None:
        assignments = ", ".join(f"{column} = ?" for column in values)
        conn.execute(f"UPDATE prs SET {assignments} WHERE number = ?", (*values.values(), number))

    def _row(self, conn: sqlite3.Connection, number: int) -> sqlite3.Row:
        row = conn.execute(f"SELECT {PR_COLUMNS} FROM prs WHERE number = ?", (number,)).fetchone()
        if row is None:
            raise NotFound(f"pull request #{number} does not exist")
        return row  # type: ignore[no-any-return]

    def _row_by_branch(self, conn: sqlite3.Connection, branch: str) -> sqlite3.Row | None:
        query = f"SELECT {PR_COLUMNS} FROM prs WHERE branch = ?"
        return conn.execute(query, (branch,)).fetchone()  # type: ignore[no-any-return]

    def _pr(self, conn: sqlite3.Connection, number: int) -> PullRequest:
        row = self._row(conn, number)
        bot_state = markers.extract_state(row["body"]) if row["author"] == self.bot else None
        return PullRequest(
            number=number,
            branch=row["branch"],
            base=row["base"],
            title=row["title"],
            body=row["body"],
            state=PrState(row["state"]),
            head_sha=row["head_sha"],
            merge_sha=row["merge_sha"],
            labels=_store.labels_of(conn, number),
            author=row["author"],
            url=f"{self.url_prefix}/pull/{number}",
            bot_state=bot_state,
        )


def forge_database(path: Path | str) -> Path:
    """Where the forge of the repo containing ``path`` keeps its metadata (may not exist)."""
    try:
        return _git.common_dir(Path(path)) / DB_NAME
    except (_git.GitFailed, FileNotFoundError):
        raise NotFound(f"{path} is not inside a git repository") from None


def _default_owner(repo: Path) -> str:
    name = _git.run(repo, "config", "user.name", check=False).stdout.strip()
    return name or getpass.getuser()


def _guess_base(repo: Path) -> str:
    for candidate in ("main", "master"):
        if _git.branch_sha(repo, candidate) is not None:
            return candidate
    return _git.default_branch(repo)


if TYPE_CHECKING:

    def _implements_forge(forge: LocalForge) -> Forge:
        return forge  # mypy proves that LocalForge has every Forge verb, typed alike
