"""GitHub from the environment: the forge, and the local clone the loop reads files from.

Environment (what ``gitmedic run --forge github`` and ``gitmedic serve --forge
github`` read):

- ``GITHUB_REPOSITORY`` = ``owner/name`` (required);
- ``GITHUB_TOKEN``, or ``GITHUB_APP_ID`` and ``GITHUB_APP_PRIVATE_KEY`` (PEM text);
- ``GITHUB_API_URL`` (optional; GitHub Enterprise's ``https://host/api/v3``);
- ``GITMEDIC_CLONE_URL`` (optional; default ``https://github.com/owner/name.git``).

The clone lives in the state directory and is fetched before each use: the
loop, the gate and the responder read files with git, so ``main`` of the clone
is reset to ``origin/main`` (the clone is gitmedic's own; nobody works in it) and
every branch is fetched, so a commit the forge just made through the API can be
read by its SHA. git authenticates with the forge's token in an HTTP header
passed in git's environment (``GIT_CONFIG_COUNT``), never in the URL, argv or on
disk.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.reconciler import gitcmd

if TYPE_CHECKING:
    from gitmedic.bot.forges.github import GitHubForge


class GitHubEnvError(ValueError):
    """The environment does not describe a usable GitHub repository."""


def github_forge_from_env(env: Mapping[str, str]) -> GitHubForge:
    from gitmedic.bot.forges.github import DEFAULT_BASE_URL, GitHubForge

    slug = env.get("GITHUB_REPOSITORY", "")
    if not slug:
        raise GitHubEnvError("--forge github needs GITHUB_REPOSITORY=owner/name")
    token = env.get("GITHUB_TOKEN") or None
    app_id = env.get("GITHUB_APP_ID") or None
    key = env.get("GITHUB_APP_PRIVATE_KEY") or None
    if not token and not (app_id and key):
        raise GitHubEnvError(
            "--forge github needs GITHUB_TOKEN, or GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY"
        )
    if token and app_id:
        token = None  # an App installation acts as the App: the token is not used
    url = env.get("GITHUB_API_URL") or DEFAULT_BASE_URL
    return GitHubForge(slug, token=token, app_id=app_id, private_key=key, base_url=url)


def working_clone(repo: Path, forge: GitHubForge) -> Clone:
    """``gitmedic run --forge github``'s REPO as gitmedic's clone, fetched from its origin."""
    proc = gitcmd.run(repo, "remote", "get-url", "origin")
    if proc.returncode != 0:
        raise GitHubEnvError(f"--forge github needs {repo} to be a clone: it has no origin")
    return Clone(repo, proc.stdout.strip(), forge.git_token, forge.default_branch())


CLONE_URL_ENV = "GITMEDIC_CLONE_URL"


def clone_url(env: Mapping[str, str]) -> str:
    return env.get(CLONE_URL_ENV) or f"https://github.com/{env['GITHUB_REPOSITORY']}.git"


class Clone:
    """gitmedic's own clone of the manifest repo, fetched before each use."""

    def __init__(
        self, path: Path, url: str, token: Callable[[], str], branch: str = "main"
    ) -> None:
        self.path, self.url, self.token, self.branch = path, url, token, branch
        self._lock = threading.Lock()

    def sync(self) -> Path:
        """Clone once, then fetch every branch and reset ``main`` to ``origin/main``."""
        with self._lock:
            if not (self.path / ".git").exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._git(None, "clone", "-q", "--no-tags", self.url, str(self.path))
            self._git(self.path, "fetch", "-q", "--prune", "origin")
            self._git(self.path, "checkout", "-q", "-B", self.branch, f"origin/{self.branch}")
            self._git(self.path, "reset", "-q", "--hard", f"origin/{self.branch}")
        return self.path

    def _git(self, cwd: Path | None, *args: str) -> None:
        proc = gitcmd.run(cwd, args[0], *args[1:], secret_config=self._auth())
        if proc.returncode != 0:
            raise GitHubEnvError(f"git {args[0]} of {self.url} failed: {proc.stderr.strip()}")

    def _auth(self) -> dict[str, str]:
        """The token as an HTTP header, handed to git in its environment (never its argv)."""
        if not self.url.startswith("http"):
            return {}
        auth = base64.b64encode(f"x-access-token:{self.token()}".encode()).decode()
        return {"http.extraHeader": f"Authorization: Basic {auth}"}
