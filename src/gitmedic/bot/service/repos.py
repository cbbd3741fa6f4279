"""``gitmedic serve --repos FILE``: the service config, the repositories one process serves.

The file (or ``GITMEDIC_REPOS``) lists repositories; every app of each is served by
the one process (its ``.gitmedic/config.yaml``, else its discovered apps, else the
one app ``path`` names)::

    repositories:
      - repo: ../shop            # the local forge: a folder (relative to this file)
        name: alice/shop         # optional: the name webhooks give (default: the folder's)
      - repo: acme/platform      # GitHub: owner/name (credentials from the environment)
        path: deploy/web         # optional: the app folder when it has no config
        namespace: web           # optional: namespace for objects that name none

The file is read strictly, before anything starts: an unknown key, a repository
listed twice or an entry without ``repo`` is a usage error naming the file and the
line (exit 2), as ``.gitmedic/config.yaml``'s problems are. Webhooks are routed by
the name (:mod:`gitmedic.bot.service.webhook.routes`), each repository's journals, clone and
dashboard issue are its own (:func:`repo_state_dir`).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.forges.github_env import CLONE_URL_ENV  # serve's one repository's clone

__all__ = ["RepoEntry", "load_repos", "repo_state_dir", "repos_file"]

REPOS_ENV = "GITMEDIC_REPOS"
TOP = "repositories"
KEYS = ("repo", "name", "path", "namespace", "clone_url")
# GitHub's owner (letters, digits, hyphens) / repository (also . and _) names
SLUG = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+")
NAME = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)?")
NAMESPACE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
# flags that name the one repository of serve without --repos (each entry says its own)
ONE_REPO_FLAGS = (("repo", "--repo"), ("path", "--path"), ("app", "--app"), ("watch", "--watch"))


@dataclass(frozen=True)
class RepoEntry:
    name: str  # what a webhook's repository.full_name says: owner/name, or the local name
    repo: str  # the local forge's folder (absolute), or GitHub's owner/name
    path: str = ""  # the app folder when the repository has no .gitmedic/config.yaml
    namespace: str = ""
    clone_url: str = ""  # GitHub only: where to clone from (default github.com's)
    line: int = 0


def repos_file(args: argparse.Namespace, env: Mapping[str, str]) -> Path | None:
    """``--repos`` or ``GITMEDIC_REPOS``; None: serve's one repository, as before."""
    raw = getattr(args, "repos", None) or env.get(REPOS_ENV, "")
    if not raw:
        return None
    given = [flag for attr, flag in ONE_REPO_FLAGS if getattr(args, attr, None)]
    if given:
        raise UsageError(
            f"--repos {raw}: {', '.join(given)} name one repository; "
            "each entry of the file says its own"
        )
    if env.get(CLONE_URL_ENV):  # would be ignored: say so rather than clone elsewhere
        raise UsageError(
            f"--repos {raw}: {CLONE_URL_ENV} names one repository's clone; "
            "give each entry of the file its own clone_url"
        )
    return Path(raw)


def repo_state_dir(state_dir: Path, name: str) -> Path:
    """A repository's own state (journals, clone, pending work): one folder per name,
    quoted so that ``acme/shop`` is one folder and no two names share one."""
    return state_dir / "repos" / quote(name, safe="")


def load_repos(path: Path, forge: str) -> list[RepoEntry]:
    """The entries of ``path`` for ``forge`` (local or github); every problem at once,
    each at its line, as a :class:`UsageError`."""
    from gitmedic.reconciler.manifests.config_file import config_line
    from gitmedic.reconciler.manifests.parse import load_strict_yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--repos {path}: cannot read it: {exc}") from None
    try:
        data = load_strict_yaml(text, str(path))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    reader = _Reader(path, forge)
    entries = reader.entries(data)
    if reader.problems:
        lines = [f"{path} is invalid:"]
        lines += [
            f"  - {path}:{config_line(text, w)}: {_shown(w)}: {why}" for w, why in reader.problems
        ]
        raise UsageError("\n".join(lines))
    return [
        RepoEntry(e.name, e.repo, e.path, e.namespace, e.clone_url, config_line(text, (TOP, i)))
        for i, e in enumerate(entries)
    ]


Where = tuple[str | int, ...]


class _Reader:
    def __init__(self, path: Path, forge: str) -> None:
        self.path, self.forge = path, forge
        self.problems: list[tuple[Where, str]] = []

    def entries(self, data: Any) -> list[RepoEntry]:
        if not isinstance(data, dict):
            self.problems.append(((), f"a mapping with {TOP!r} (a list of repositories)"))
            return []
        for key in sorted(set(data) - {TOP}, key=str):
            self.problems.append(((key,), f"unknown key (the file has only {TOP!r})"))
        listed = data.get(TOP)
        if not isinstance(listed, list) or not listed:
            self.problems.append(((TOP,), "missing, or not a non-empty list of repositories"))
            return []
        entries: list[RepoEntry] = []
        seen: dict[tuple[str, str], int] = {}
        for i, item in enumerate(listed):
            entry = self.entry((TOP, i), item)
            if entry is None:
                continue
            self._twice(i, entry, seen)
            entries.append(entry)
        return entries

    def _twice(self, i: int, entry: RepoEntry, seen: dict[tuple[str, str], int]) -> None:
        keys = [("name", entry.name.casefold())]  # GitHub's names ignore case
        if entry.repo != entry.name:  # a local folder: two names must not act on one
            keys.append(("repository", entry.repo))
        for kind, key in keys:
            if (kind, key) in seen:
                first = f"{TOP}[{seen[kind, key]}]"
                self.problems.append(((TOP, i), f"{kind} {key} is listed twice (first: {first})"))
            seen.setdefault((kind, key), i)

    def entry(self, where: Where, item: Any) -> RepoEntry | None:
        if not isinstance(item, dict):
            self.problems.append((where, "each repository is a mapping with 'repo'"))
            return None
        before = len(self.problems)
        for key in sorted(set(item) - set(KEYS), key=str):
            self.problems.append(((*where, key), f"unknown key (allowed: {', '.join(KEYS)})"))
        values = {}
        for key in KEYS:
            value = item.get(key)
            if value is not None and not (isinstance(value, str) and value.strip()):
                self.problems.append(((*where, key), "not a non-empty string"))
            values[key] = value.strip() if isinstance(value, str) else ""
        if "repo" not in item:
            self.problems.append((where, "missing 'repo' (a folder, or owner/name on GitHub)"))
        made = self._made(where, values)
        return made if len(self.problems) == before else None

    def _made(self, where: Where, v: dict[str, str]) -> RepoEntry | None:
        repo, name = v["repo"], v["name"]
        if v["path"] and (PurePosixPath(v["path"]).is_absolute() or ".." in v["path"].split("/")):
            self.problems.append(((*where, "path"), "a folder inside the repository"))
        if v["namespace"] and not NAMESPACE.fullmatch(v["namespace"]):
            self.problems.append(((*where, "namespace"), "not a namespace name"))
        if not repo:
            return None
        if self.forge == "github":
            if not SLUG.fullmatch(repo):
                self.problems.append(((*where, "repo"), "not owner/name (the forge is github)"))
            if name:
                self.problems.append(((*where, "name"), "the forge is github: owner/name is it"))
            return RepoEntry(repo, repo, v["path"], v["namespace"], v["clone_url"])
        if v["clone_url"]:
            self.problems.append(((*where, "clone_url"), "only for the forge github"))
        folder = (self.path.parent / repo).resolve()
        if not (folder / ".git").exists():
            self.problems.append(((*where, "repo"), f"{folder} is not a git repository"))
        name = name or folder.name
        if not NAME.fullmatch(name) or name in (".", ".."):
            self.problems.append(((*where, "name"), f"{name!r}: not a name or owner/name"))
        return RepoEntry(name, str(folder), v["path"], v["namespace"])


def _shown(where: Where) -> str:
    return ".".join(f"[{p}]" if isinstance(p, int) else p for p in where).replace(".[", "[") or (
        "(top level)"
    )
