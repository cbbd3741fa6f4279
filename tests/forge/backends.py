"""Backends for the forge contract suite: one forge plus what a test needs around it.

The contract suite (``test_contract.py``) talks to a forge only through the
:class:`~gitmedic.reconciler.forge.Forge` verbs, and sets the scene (pushing
commits, people commenting or editing a body, granting permissions, reading the
repository's files back) through a :class:`Backend`. A second forge joins the suite
by writing one ``Backend`` class and adding it to ``BACKENDS``: the ``backend``
fixture is parametrised over that dict.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from gitmedic.bot.forges.github import GitHubForge
from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import Comment, Forge, Permission
from tests.support.github_standin import shared_server
from tests.support.github_store import GitHubStore

OWNER = "alice"
BASE_FILES = {
    "apps/web/deployment.yaml": "replicas: 2\nimage: web:1.0\nport: 8080\n",
    "apps/web/service.yaml": "port: 80\ntargetPort: 8080\n",
    "README.md": "manifests\n",
}
BRANCH = "gitmedic/inc-1/service-target-port"
FIX = {"apps/web/service.yaml": "port: 80\ntargetPort: 8081\n"}
STATE = {"incident": "inc-1", "attempt": 1, "phase": "pr-opened"}
_ENV = {
    "GIT_AUTHOR_NAME": "Alice",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


class Backend(Protocol):
    forge: Forge
    owner: str  # the repository owner: admin

    def reopen(self) -> Forge:
        """A new forge object over the same storage: what a restarted bot sees."""
        ...

    def push(self, branch: str, files: Mapping[str, str | None], base: str = "main") -> str:
        """Commit ``files`` (``None`` deletes) on ``branch`` (new: from ``base``); its sha."""
        ...

    def branch_sha(self, branch: str) -> str | None: ...

    def branches(self) -> set[str]: ...

    def files_at(self, sha: str) -> dict[str, str]: ...

    def parents(self, sha: str) -> tuple[str, ...]: ...

    def comment_as(self, user: str, number: int, body: str) -> Comment: ...

    def edit_body(self, number: int, body: str) -> None:
        """A person edits the PR's body on the forge."""
        ...

    def grant(self, user: str, permission: Permission) -> None: ...

    def assert_clean(self) -> None:
        """Nothing half-done is left: no work-tree changes, no operation in progress."""
        ...

    def author(self, sha: str) -> str:
        """The commit's author as ``Name <email>``."""
        ...


def git(repo: Path, *args: str, check: bool = True) -> str:
    """git's output; with ``check=False`` a failing command gives ``""``."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV},
        check=check,
    )
    return proc.stdout.strip() if proc.returncode == 0 else ""


def make_repo(path: Path, files: Mapping[str, str] = BASE_FILES, bare: bool = False) -> Path:
    """A repo whose ``main`` holds ``files`` in one commit (checked out unless bare)."""
    work = path if not bare else path.with_name(path.name + "-seed")
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.name", OWNER)
    _write(work, files)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial manifests")
    if bare:
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(path)], check=True)
        git(path, "config", "user.name", OWNER)
    return path


def commit_files(repo: Path, branch: str, files: Mapping[str, str | None], base: str) -> str:
    """Commit on ``branch`` without touching any work tree (a temporary index)."""
    parent = git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False) or None
    with tempfile.TemporaryDirectory() as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        start = parent or git(repo, "rev-parse", f"refs/heads/{base}")
        _git_env(repo, index, "read-tree", start)
        for name, text in files.items():
            if text is None:
                # (--index-info, not --force-remove: that one needs a work tree)
                _git_env(
                    repo, index, "update-index", "--index-info", stdin=f"0 {'0' * 40}\t{name}\n"
                )
                continue
            blob = _git_env(repo, index, "hash-object", "-w", "--stdin", stdin=text)
            _git_env(repo, index, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
        tree = _git_env(repo, index, "write-tree")
    sha = git(repo, "commit-tree", tree, "-p", start, "-m", f"change {branch}")
    git(repo, "update-ref", f"refs/heads/{branch}", sha)
    return sha


class _GitReads:
    """What the contract reads straight from the git repository behind either forge."""

    repo: Path

    def branches(self) -> set[str]:
        names = git(self.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads")
        return set(names.split())

    def files_at(self, sha: str) -> dict[str, str]:
        names = git(self.repo, "ls-tree", "-r", "--name-only", sha).splitlines()
        return {name: _show(self.repo, f"{sha}:{name}") for name in names}

    def parents(self, sha: str) -> tuple[str, ...]:
        return tuple(git(self.repo, "rev-list", "--parents", "-n1", sha).split()[1:])


class LocalBackend(_GitReads):
    """LocalForge over a non-bare repo with ``main`` checked out in ``tmp_path/repo``."""

    def __init__(self, tmp_path: Path) -> None:
        self.repo = make_repo(tmp_path / "repo")
        self.owner = OWNER
        self.local = LocalForge(self.repo)
        self.forge: Forge = self.local

    def reopen(self) -> Forge:
        return LocalForge(self.repo)

    def push(self, branch: str, files: Mapping[str, str | None], base: str = "main") -> str:
        if git(self.repo, "symbolic-ref", "--short", "HEAD") != branch:
            return commit_files(self.repo, branch, files, base)
        _write(self.repo, files)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", f"change {branch}")
        return git(self.repo, "rev-parse", "HEAD")

    def branch_sha(self, branch: str) -> str | None:
        ref = f"refs/heads/{branch}"
        return git(self.repo, "rev-parse", "--verify", "-q", ref, check=False) or None

    def comment_as(self, user: str, number: int, body: str) -> Comment:
        return self.local.comment_as(user, number, body)

    def edit_body(self, number: int, body: str) -> None:
        self.local.edit_body(number, body)

    def grant(self, user: str, permission: Permission) -> None:
        self.local.set_permission(user, permission)

    def assert_clean(self) -> None:
        assert git(self.repo, "status", "--porcelain") == ""
        assert not (self.repo / ".git" / "MERGE_HEAD").exists()
        assert not (self.repo / ".git" / "REVERT_HEAD").exists()
        assert git(self.repo, "worktree", "list", "--porcelain").count("worktree ") == 1

    def author(self, sha: str) -> str:
        return git(self.repo, "log", "-1", "--format=%an <%ae>", sha)


class GitHubBackend(_GitReads):
    """GitHubForge over HTTP against the stand-in: a fresh store per test, one server."""

    TOKEN = "ghp_" + "contract0test0token0000000000000000"

    def __init__(self, tmp_path: Path) -> None:
        self.repo = make_repo(tmp_path / "github.git", bare=True)
        self.store = GitHubStore(git_dir=self.repo)
        self.url = shared_server().use(self.store)
        self.owner = next(u for u, level in self.store.permissions.items() if level == "admin")
        self.sleeps: list[float] = []
        self.forge: Forge = self.reopen()

    def reopen(self) -> Forge:
        return GitHubForge(
            self.store.full_name, token=self.TOKEN, base_url=self.url, sleep=self.sleeps.append
        )

    def push(self, branch: str, files: Mapping[str, str | None], base: str = "main") -> str:
        return commit_files(self.repo, branch, files, base)

    def branch_sha(self, branch: str) -> str | None:
        return self.store.branch_sha(branch)

    def comment_as(self, user: str, number: int, body: str) -> Comment:
        assert number in self.store.pulls or number in self.store.issues
        cid = self.store.new_id()
        self.store.comments[cid] = {"id": cid, "issue": number, "body": body, "user": user}
        return Comment(cid, number, user, body, None)

    def edit_body(self, number: int, body: str) -> None:
        self.store.pulls[number]["body"] = body

    def grant(self, user: str, permission: Permission) -> None:
        self.store.permissions[user] = permission.label

    def assert_clean(self) -> None:
        assert git(self.repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        refs = git(self.repo, "for-each-ref", "--format=%(refname)").split()
        assert all(ref.startswith("refs/heads/") for ref in refs), refs
        assert self.sleeps == []  # no retries were needed

    def author(self, sha: str) -> str:
        return git(self.repo, "log", "-1", "--format=%an <%ae>", sha)


BACKENDS: dict[str, Callable[[Path], Backend]] = {"local": LocalBackend, "github": GitHubBackend}


def open_fix(backend: Backend, branch: str = BRANCH, **state: object) -> int:
    """Push the targetPort fix on ``branch`` and ensure its PR; the PR's number."""
    backend.push(branch, FIX)
    pr = backend.forge.ensure_pr(
        branch, "main", "Fix targetPort", "- [ ] hold\n", ["gitmedic"], {**STATE, **state}
    )
    return pr.number


def _write(root: Path, files: Mapping[str, str | None]) -> None:
    for name, text in files.items():
        target = root / name
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _git_env(repo: Path, extra: dict[str, str], *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **_ENV, **extra},
        check=True,
    )
    return proc.stdout.strip()


def _show(repo: Path, spec: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), "show", spec], capture_output=True, text=True, check=True
    )
    return proc.stdout
