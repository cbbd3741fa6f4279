"""The state behind the GitHub REST stand-in: a real bare git repo plus PR/issue records.

Responses are built from real GitHub payloads (tests/fixtures/data/github-api and
github-webhooks) with the fields this store owns overwritten, so the client
libraries parse exactly the shapes GitHub sends. Git objects are real: blobs,
trees, commits and refs live in a bare repository and merges are real merges.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.github_behaviour import Lag, RateWindow, Tokens

DATA = Path(__file__).parents[1] / "fixtures" / "data"
API = DATA / "github-api"
HOOKS = DATA / "github-webhooks"
NOW = "2026-11-29T12:00:00Z"
LIVE: list[GitHubStore] = []  # every store made, for the conformance check after each test
PERMISSIONS = ("none", "read", "triage", "write", "maintain", "admin")


def template(rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / rel).read_text())
    return data


TEMPLATES = {
    "repo": template("github-api/pygithub-replaydata/get_repos_owner_repo.200.json"),
    "pull": template("github-api/pygithub-replaydata/get_repos_pulls_number.open-clean.200.json"),
    "issue": template("github-webhooks/octokit-webhooks-examples/issue_comment/created.json")[
        "issue"
    ],
    "comment": template(
        "github-api/pygithub-replaydata/post_repos_issues_number_comments.201.json"
    ),
    "status": template("github-api/octokit-fixtures/post_repos_statuses_sha.201.json"),
    "check": template("github-api/pygithub-replaydata/post_repos_check_runs.201.json"),
    "commit": template("github-api/pygithub-replaydata/get_repos_git_commits_sha.200.json"),
    "ref": template("github-api/pygithub-replaydata/get_repos_git_ref_heads_branch.200.json"),
    "user": template(
        "github-api/pygithub-replaydata/get_repos_collaborators_user_permission.200.json"
    )["user"],
}


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class Fault:
    """An error the stand-in answers once (or ``times``) for a method and path prefix."""

    method: str
    path_contains: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "injected"
    times: int = 1
    errors: list[dict[str, str]] | None = None  # GitHub's "errors" of a 422


@dataclass
class GitHubStore:
    owner: str = "acme"
    name: str = "manifests"
    base_url: str = "http://127.0.0.1"
    git_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="gh-standin-")))
    permissions: dict[str, str] = field(default_factory=lambda: {"acme-admin": "admin"})
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    checks: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels: set[str] = field(default_factory=set)
    faults: list[Fault] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    auto_merge: dict[int, str] = field(default_factory=dict)
    allow_auto_merge: bool = True
    graphql_enabled: bool = True
    tokens: set[str] = field(default_factory=set)  # when non-empty, only these authenticate
    app_id: int | None = None  # a GitHub App installed on the repo (JWT auth)
    app_public_key: str | None = None  # PEM, verifies the App's RS256 JWTs
    installation_id: int = 4242
    lock: threading.RLock = field(default_factory=threading.RLock)
    clock: Callable[[], float] = time.time  # the server's time: token expiry, rate windows
    lag: Lag = field(default_factory=Lag)
    rate: RateWindow = field(default_factory=RateWindow)
    minted: Tokens = field(default_factory=Tokens)
    required_contexts: tuple[str, ...] = ()  # branch protection: statuses that must pass
    strict: bool = False  # branch protection: the head must contain the base
    conform: bool = True  # check every request and reply against GitHub's description
    violations: list[str] = field(default_factory=list)  # what did not (fails the test)
    checked: int = 0  # exchanges checked
    _mergeable_seen: dict[int, tuple[str, str]] = field(default_factory=dict)
    _next_id: int = 1000

    def __post_init__(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            self.git("init", "-q", "--bare", "-b", "main", ".")
        self.rate.clock = self.minted.clock = lambda: self.clock()
        LIVE.append(self)

    # -- plumbing ----------------------------------------------------------------------

    def git(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> str:
        proc = subprocess.run(
            ["git", "-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", *args],
            cwd=self.git_dir,
            input=input,
            env={**os.environ, **env} if env else None,
            capture_output=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise ApiError(422, f"git {args[0]}: {proc.stderr.decode().strip()}")
        return proc.stdout.decode().strip()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def next_number(self) -> int:
        return max([0, *self.pulls, *self.issues]) + 1

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.full_name}"

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.method == method and f.path_contains in path and f.times > 0:
                    f.times -= 1
                    return f
        return None

    # -- git objects -------------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        for candidate in (ref, f"refs/heads/{ref}"):
            out = self.git(
                "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", check=False
            )
            if out:
                return out
        raise ApiError(404, f"No commit found for SHA: {ref}")

    def branch_sha(self, branch: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
        return out or None

    def commit_json(self, sha: str) -> dict[str, Any]:
        raw = self.git("cat-file", "commit", sha)
        header, _, message = raw.partition("\n\n")
        tree = next(line.split()[1] for line in header.splitlines() if line.startswith("tree "))
        parents = [line.split()[1] for line in header.splitlines() if line.startswith("parent ")]
        body = copy.deepcopy(TEMPLATES["commit"])
        body.update(
            sha=sha,
            node_id=f"C_{sha[:10]}",
            message=message,
            url=f"{self.repo_url}/git/commits/{sha}",
            html_url=f"https://github.com/{self.full_name}/commit/{sha}",
            tree={"sha": tree, "url": f"{self.repo_url}/git/trees/{tree}"},
            parents=[
                {
                    "sha": p,
                    "url": f"{self.repo_url}/git/commits/{p}",
                    "html_url": f"https://github.com/{self.full_name}/commit/{p}",
                }
                for p in parents
            ],
        )
        return body

    def ref_json(self, ref: str, sha: str) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["ref"])
        body.update(ref=ref, url=f"{self.repo_url}/git/{ref}", node_id=f"REF_{ref}")
        body["object"] = {"sha": sha, "type": "commit", "url": f"{self.repo_url}/git/commits/{sha}"}
        return body

    def merge_commit(self, base: str, head: str, message: str, squash: bool) -> str:
        proc = subprocess.run(
            ["git", "merge-tree", "--write-tree", base, head],
            cwd=self.git_dir,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise ApiError(405, "Pull Request is not mergeable")
        tree = proc.stdout.decode().split()[0]
        parents = ["-p", base] if squash else ["-p", base, "-p", head]
        return self.git("commit-tree", tree, *parents, "-m", message)

    def revert_commit(self, onto: str, merge_sha: str, message: str) -> str:
        """A commit on ``onto`` undoing merge ``merge_sha`` (relative to its first parent)."""
        parents = self.git("rev-list", "--parents", "-n", "1", merge_sha).split()[1:]
        mainline = ["-m", "1"] if len(parents) > 1 else []
        with tempfile.TemporaryDirectory(prefix="gh-revert-") as tmp:
            wt = str(Path(tmp) / "wt")
            self.git("worktree", "add", "-q", "--detach", wt, onto)
            try:
                if _run(wt, "revert", "--no-commit", *mainline, merge_sha).returncode != 0:
                    raise ApiError(409, "the revert conflicts with the base branch")
                if _run(wt, "commit", "-q", "-m", message).returncode != 0:
                    raise ApiError(422, "the pull request's changes are already reverted")
                return _run(wt, "rev-parse", "HEAD").stdout.decode().strip()
            finally:
                self.git("worktree", "remove", "--force", wt)

    # -- records -----------------------------------------------------------------------

    def user(self, login: str) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["user"])
        body.update(
            login=login, id=abs(hash(login)) % 10**7, type="Bot" if "[bot]" in login else "User"
        )
        return body

    def pull_json(self, pr: dict[str, Any]) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["pull"])
        n = pr["number"]
        head_sha = self.branch_sha(pr["head"]) or pr["head_sha"]
        base_sha = self.branch_sha(pr["base"]) or ""
        mergeable, mergeable_state = self._mergeability(pr, base_sha, head_sha)
        body.update(
            number=n,
            id=pr["id"],
            node_id=f"PR_{n}",
            title=pr["title"],
            body=pr["body"],
            state="closed" if pr["state"] != "open" else "open",
            merged=pr["state"] == "merged",
            merge_commit_sha=pr.get("merge_sha"),
            merged_at=NOW if pr["state"] == "merged" else None,
            closed_at=None if pr["state"] == "open" else NOW,
            draft=False,
            mergeable=mergeable,
            mergeable_state=mergeable_state,
            labels=[self.label_json(name) for name in pr["labels"]],
            url=f"{self.repo_url}/pulls/{n}",
            html_url=f"https://github.com/{self.full_name}/pull/{n}",
            issue_url=f"{self.repo_url}/issues/{n}",
            user=self.user(pr["user"]),
            auto_merge=self._auto_merge_json(n),
        )
        for side, ref, sha in (("head", pr["head"], head_sha), ("base", pr["base"], base_sha)):
            body[side] = {**body[side], "ref": ref, "sha": sha, "label": f"{self.owner}:{ref}"}
            body[side]["repo"] = self.repo_json()
            body[side]["user"] = self.user(self.owner)
        return body

    def _auto_merge_json(self, number: int) -> dict[str, Any] | None:
        if number not in self.auto_merge:
            return None
        return {
            "enabled_by": self.user("gitmedic[bot]"),
            "merge_method": self.auto_merge[number],
            "commit_title": "",
            "commit_message": "",
        }

    def label_json(self, name: str) -> dict[str, Any]:
        """A label as GitHub shows it; made on first use, grey, with no description."""
        number = int(hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:8], 16)
        return {
            "id": number,
            "node_id": f"LA_{number}",
            "url": f"{self.repo_url}/labels/{urllib.parse.quote(name, safe='')}",
            "name": name,
            "description": "",  # (a pull request's list shows labels: never null there)
            "color": "ededed",
            "default": False,
        }

    def _mergeability(
        self, pr: dict[str, Any], base_sha: str, head_sha: str
    ) -> tuple[bool | None, str]:
        """GitHub's ``mergeable`` and ``mergeable_state``: computed lazily, as GitHub does.

        The first read after the head or base moved starts the computation and
        answers ``null`` / ``unknown``; later reads give the result.
        """
        if pr["state"] != "open":
            return None, "unknown"
        key = (base_sha, head_sha)
        if self._mergeable_seen.get(pr["number"]) != key:
            self._mergeable_seen[pr["number"]] = key
            return None, "unknown"
        if not self._mergeable(base_sha, head_sha):
            return False, "dirty"
        latest = {st["context"]: st["state"] for st in self.statuses if st["sha"] == head_sha}
        if any(latest.get(context) != "success" for context in self.required_contexts):
            return True, "blocked"
        if self.strict and head_sha and base_sha and not self._contains(head_sha, base_sha):
            return True, "behind"
        if any(state != "success" for state in latest.values()):
            return True, "unstable"
        return True, "clean"

    def _contains(self, head: str, base: str) -> bool:
        proc = subprocess.run(
            ["git", "merge-base", "--is-ancestor", base, head], cwd=self.git_dir, check=False
        )
        return proc.returncode == 0

    def _mergeable(self, base: str, head: str) -> bool:
        if not base or not head:
            return False
        proc = subprocess.run(
            ["git", "merge-tree", "--write-tree", base, head],
            cwd=self.git_dir,
            capture_output=True,
            check=False,
        )
        return proc.returncode == 0

    def issue_json(self, issue: dict[str, Any]) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["issue"])
        n = issue["number"]
        body.update(
            number=n,
            id=issue["id"],
            node_id=f"I_{n}",
            title=issue["title"],
            body=issue["body"],
            state=issue["state"],
            labels=[self.label_json(name) for name in issue["labels"]],
            url=f"{self.repo_url}/issues/{n}",
            html_url=f"https://github.com/{self.full_name}/issues/{n}",
            repository_url=self.repo_url,
            comments_url=f"{self.repo_url}/issues/{n}/comments",
            user=self.user(issue["user"]),
            comments=sum(1 for c in self.comments.values() if c["issue"] == n),
            pull_request=self._pull_link(n),
        )
        if body["pull_request"] is None:
            del body["pull_request"]
        return body

    def _pull_link(self, number: int) -> dict[str, Any] | None:
        if number not in self.pulls:
            return None
        html = f"https://github.com/{self.full_name}/pull/{number}"
        merged = NOW if self.pulls[number]["state"] == "merged" else None
        return {
            "url": f"{self.repo_url}/pulls/{number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": merged,
        }

    def comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["comment"])
        body.update(
            id=c["id"],
            node_id=f"IC_{c['id']}",
            created_at=NOW,
            updated_at=NOW,
            body=c["body"],
            user=self.user(c["user"]),
            url=f"{self.repo_url}/issues/comments/{c['id']}",
            issue_url=f"{self.repo_url}/issues/{c['issue']}",
            html_url=f"https://github.com/{self.full_name}/issues/{c['issue']}#issuecomment-{c['id']}",
        )
        return body

    def repo_json(self) -> dict[str, Any]:
        body = copy.deepcopy(TEMPLATES["repo"])
        body.update(
            name=self.name,
            full_name=self.full_name,
            default_branch="main",
            url=self.repo_url,
            html_url=f"https://github.com/{self.full_name}",
            allow_auto_merge=self.allow_auto_merge,
            allow_merge_commit=True,
            allow_squash_merge=True,
        )
        body["owner"] = {**body["owner"], "login": self.owner}
        return body


def _run(cwd: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", *args],
        cwd=cwd,
        capture_output=True,
        check=False,
    )
