"""A thin, typed wrapper over the git command line.

Every call is ``git -C <root> <args...>`` with an argument list (never a shell
string), through :mod:`gitmedic.reconciler.gitcmd` (so no hook or configured
program of the repository runs), output captured, and failures turned into
typed errors that carry the command and git's stderr:

- :class:`GitError` (any failure), and its subclasses
- :class:`UnknownRevision` (a revision, branch or path at a revision that does not exist),
- :class:`NothingToCommit`,
- :class:`MergeConflict` (with the conflicting files).

A merge or revert that conflicts is aborted before :class:`MergeConflict` is
raised, so the repository is left exactly as it was. Commits are made as
``gitmedic[bot] <gitmedic[bot]@users.noreply.github.com>`` unless another
:class:`Identity` is given; the identity goes through the environment, so a
machine without ``user.name`` configured works.

Public API: ``Git.init(path)``, ``Git.clone(url, dest)``, ``Git(root)`` and its
methods ``head``, ``current_branch``, ``rev_parse``, ``branch_create``,
``branch_delete``, ``branches``, ``checkout``, ``add``, ``commit``, ``merge``,
``revert``, ``log``, ``diff``, ``diff_stats``, ``show_file``, ``is_ancestor``,
``is_clean``, ``worktree_add``, ``worktree_remove``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.reconciler import gitcmd

__all__ = [
    "BOT",
    "Commit",
    "FileStat",
    "Git",
    "GitError",
    "Identity",
    "MergeConflict",
    "NothingToCommit",
    "SymlinkRefused",
    "UnknownRevision",
]


class GitError(Exception):
    """A git command failed."""

    def __init__(self, args: list[str], stderr: str, message: str = "") -> None:
        self.command = ["git", *args]
        self.stderr = stderr.strip()
        super().__init__(message or f"`{' '.join(self.command)}` failed: {self.stderr}")


class UnknownRevision(GitError):
    """The revision (or the path at that revision) does not exist."""


class SymlinkRefused(UnknownRevision):
    """The path is a symbolic link in the commit: gitmedic reads no link's target."""


class NothingToCommit(GitError):
    """The commit (or revert) would change nothing."""


class MergeConflict(GitError):
    """A merge or revert conflicted; it was aborted and the work tree is clean."""

    def __init__(self, args: list[str], stderr: str, files: list[str]) -> None:
        self.files = files
        what = "revert" if "revert" in args else "merge"
        shown = ", ".join(files) or "unknown files"
        super().__init__(args, stderr, f"{what} conflicts in {shown} (aborted, repo unchanged)")


@dataclass(frozen=True)
class Identity:
    name: str
    email: str


BOT = Identity("gitmedic[bot]", "gitmedic[bot]@users.noreply.github.com")
SYMLINK_MODE = "120000"  # a tree entry's mode for a symbolic link
_SEP = "\x1f"
_FORMAT = _SEP.join(["%H", "%P", "%an", "%ae", "%at", "%s"])


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    timestamp: int
    subject: str

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


@dataclass(frozen=True)
class FileStat:
    path: str
    added: int  # -1 for binary files
    deleted: int


class Git:
    def __init__(self, root: str | os.PathLike[str], identity: Identity = BOT) -> None:
        self.root = Path(root)
        self.identity = identity

    @classmethod
    def init(cls, path: str | os.PathLike[str], branch: str = "main", **kw: Identity) -> Git:
        Path(path).mkdir(parents=True, exist_ok=True)
        _run(["init", "-q", "-b", branch, str(path)], None, {})
        return cls(path, **kw)

    @classmethod
    def clone(cls, url: str, dest: str | os.PathLike[str], **kw: Identity) -> Git:
        _run(["clone", "-q", "--", url, str(dest)], None, {})
        return cls(dest, **kw)

    def run(self, *args: str, check: bool = True) -> gitcmd.CompletedProcess[str]:
        env = {
            "GIT_AUTHOR_NAME": self.identity.name,
            "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name,
            "GIT_COMMITTER_EMAIL": self.identity.email,
        }
        return _run(list(args), self.root, env, check=check)

    # revisions ---------------------------------------------------------------
    def rev_parse(self, rev: str) -> str:
        proc = self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        if proc.returncode != 0:
            raise UnknownRevision(["rev-parse", rev], proc.stderr, f"unknown revision {rev!r}")
        return proc.stdout.strip()

    def head(self) -> str:
        return self.rev_parse("HEAD")

    def current_branch(self) -> str | None:
        proc = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return proc.stdout.strip() or None

    def is_ancestor(self, ancestor: str, rev: str) -> bool:
        a, b = self.rev_parse(ancestor), self.rev_parse(rev)
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    # branches ----------------------------------------------------------------
    def branches(self) -> list[str]:
        out = self.run("for-each-ref", "--format=%(refname:short)", "refs/heads").stdout
        return sorted(out.split())

    def branch_create(self, name: str, start: str = "HEAD") -> None:
        self.run("branch", "--", name, self.rev_parse(start))

    def branch_delete(self, name: str, *, force: bool = False) -> None:
        if name not in self.branches():
            raise UnknownRevision(["branch", "-d", name], "", f"no branch {name!r}")
        self.run("branch", "-D" if force else "-d", "--", name)

    def checkout(self, name: str) -> None:
        self.rev_parse(name)
        self.run("checkout", "-q", name, "--")

    # changes -----------------------------------------------------------------
    def add(self, *paths: str) -> None:
        self.run("add", "--", *(paths or (".",)))

    def is_clean(self) -> bool:
        return not self.run("status", "--porcelain", "--untracked-files=all").stdout.strip()

    def commit(self, message: str, *paths: str, allow_empty: bool = False) -> str:
        if paths:
            self.add(*paths)
        args = ["commit", "-q", "--no-verify", "-m", message]
        if allow_empty:
            args.append("--allow-empty")
        elif not self.run("diff", "--cached", "--quiet", check=False).returncode:
            raise NothingToCommit(args, "", "nothing to commit: the index matches HEAD")
        self.run(*args)
        return self.head()

    def merge(self, branch: str, message: str, *, no_ff: bool = True) -> str:
        """Merge ``branch`` into the checked-out branch; returns the new head."""
        self.rev_parse(branch)
        args = ["merge", "-q", "--no-edit", "-m", message, *(["--no-ff"] if no_ff else []), branch]
        proc = self.run(*args, check=False)
        if proc.returncode != 0:
            files = self._conflicts()
            self.run("merge", "--abort", check=False)
            if files:
                raise MergeConflict(args, proc.stderr or proc.stdout, files)
            raise GitError(args, proc.stderr or proc.stdout)
        return self.head()

    def revert(self, rev: str, message: str | None = None) -> str:
        """Commit the revert of ``rev`` (a merge is reverted against its first parent)."""
        commit = self.log(rev=self.rev_parse(rev), max_count=1)[0]
        args = ["revert", "--no-commit", *(["-m", "1"] if commit.is_merge else []), commit.sha]
        proc = self.run(*args, check=False)
        if proc.returncode != 0:
            files = self._conflicts()
            self.run("revert", "--abort", check=False)
            if files:
                raise MergeConflict(args, proc.stderr, files)
            raise GitError(args, proc.stderr)
        if self.run("diff", "--cached", "--quiet", check=False).returncode == 0:
            self.run("revert", "--abort", check=False)
            raise NothingToCommit(args, "", f"reverting {commit.sha[:12]} changes nothing")
        body = message or f'Revert "{commit.subject}"\n\nThis reverts commit {commit.sha}.'
        self.run("commit", "-q", "--no-verify", "-m", body)
        return self.head()

    def _conflicts(self) -> list[str]:
        out = self.run("diff", "--name-only", "--diff-filter=U", check=False).stdout
        return sorted(out.split())

    # history -----------------------------------------------------------------
    def log(
        self,
        *paths: str,
        rev: str = "HEAD",
        max_count: int | None = None,
        first_parent: bool = False,
    ) -> list[Commit]:
        """Commits reachable from ``rev`` (newest first), only those touching ``paths`` if given."""
        args = ["log", f"--format={_FORMAT}", "-z", self.rev_parse(rev)]
        if max_count is not None:
            args.insert(1, f"--max-count={max_count}")
        if first_parent:
            args.insert(1, "--first-parent")
        out = self.run(*args, "--", *paths).stdout
        return [_commit(record) for record in out.split("\0") if record.strip()]

    def show_file(self, rev: str, path: str) -> bytes:
        """The content of ``path`` at ``rev``; a symbolic link is refused, never followed."""
        sha = self.rev_parse(rev)
        entry = _run(["ls-tree", "-z", sha, "--", path], self.root, {}, check=False).stdout
        mode, _, rest = entry.partition(" ")
        if not entry or rest.split(" ", 1)[0] != "blob":
            raise UnknownRevision(["show", f"{rev}:{path}"], "", f"{path} does not exist at {rev}")
        if mode == SYMLINK_MODE:
            raise SymlinkRefused(
                ["show", f"{rev}:{path}"],
                "",
                f"{path} is a symbolic link at {rev[:12]}; gitmedic does not follow links",
            )
        blob = rest.split(" ", 1)[1].split("\t", 1)[0]
        proc = _run(["cat-file", "blob", blob], self.root, {}, check=False, text=False)
        if proc.returncode != 0:
            raise UnknownRevision(["show", f"{rev}:{path}"], "", f"{path} does not exist at {rev}")
        out: bytes = proc.stdout
        return out

    def diff(self, a: str, b: str | None = None, *paths: str, context: int = 3) -> str:
        """Unified diff from ``a`` to ``b`` (the work tree when ``b`` is None)."""
        revs = [self.rev_parse(a), *([self.rev_parse(b)] if b else [])]
        flags = ["--no-color", "--no-ext-diff", "--no-renames", f"-U{context}"]
        return self.run("diff", *flags, *revs, "--", *paths).stdout

    def diff_stats(self, a: str, b: str | None = None, *paths: str) -> list[FileStat]:
        revs = [self.rev_parse(a), *([self.rev_parse(b)] if b else [])]
        out = self.run("diff", "--numstat", "-z", "--no-renames", *revs, "--", *paths).stdout
        stats = []
        for record in out.split("\0"):
            if record.strip():
                added, deleted, path = record.split("\t", 2)
                stats.append(FileStat(path, _count(added), _count(deleted)))
        return stats

    # worktrees -----------------------------------------------------------------
    def worktree_add(self, path: str | os.PathLike[str], branch: str) -> Git:
        self.run("worktree", "add", "-q", str(path), branch)
        return Git(path, self.identity)

    def worktree_remove(self, path: str | os.PathLike[str]) -> None:
        self.run("worktree", "remove", "--force", str(path))


def _count(text: str) -> int:
    return -1 if text == "-" else int(text)


def _commit(record: str) -> Commit:
    sha, parents, author, email, ts, subject = record.strip("\n").split(_SEP, 5)
    return Commit(sha, tuple(parents.split()), author, email, int(ts), subject)


def _run(
    args: list[str],
    root: Path | None,
    env: dict[str, str],
    *,
    check: bool = True,
    text: bool = True,
) -> gitcmd.CompletedProcess[Any]:
    if not text:
        raw = gitcmd.run_bytes(root, args[0], *args[1:], env=env)
        if check and raw.returncode != 0:
            raise GitError(args, raw.stderr.decode(errors="replace"))
        return raw
    proc = gitcmd.run(root, args[0], *args[1:], env=env)
    if check and proc.returncode != 0:
        raise GitError(args, proc.stderr)
    return proc
