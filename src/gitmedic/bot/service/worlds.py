"""The repositories ``gitmedic serve`` acts on, each as a :class:`RepoWorld`: its forge,
the repo read (gitmedic's clone with ``--forge github``, under the repository's own
state folder) and how to fetch it again.

Without ``--repos``: the one repository of ``--repo`` (local) or ``GITHUB_REPOSITORY``
(:func:`forge_and_repo`). With it: one per entry of the service config
(:mod:`gitmedic.bot.service.repos`), each with its own state folder (journals, clone,
pending work) and its entry's ``path``/``namespace`` (:func:`worlds_of`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from gitmedic.bot.forges.github_env import CLONE_URL_ENV
from gitmedic.bot.service.repos import RepoEntry, repo_state_dir
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.reconciler.forge import Forge

__all__ = ["RepoWorld", "check_one_journal", "forge_and_repo", "github_and_clone", "worlds_of"]


class Named(Protocol):
    """An app's settings, as far as the journal's keys go (a LoopConfig)."""

    @property
    def app(self) -> str: ...


@dataclass(frozen=True)
class RepoWorld:
    """A repository serve acts on: its forge, the repo read (a clone with --forge
    github) and how to fetch it again."""

    forge: Forge
    repo: Path
    fetch: Callable[[], object]
    name: str = ""  # serve --repos: the name webhooks give; "": serve's one repository
    state_dir: Path | None = None  # its journals' folder; default the state directory
    args: argparse.Namespace | None = None  # its entry's path/namespace; default the command's


def check_one_journal(
    worlds: list[RepoWorld], each: Sequence[Sequence[Named]], env: Mapping[str, str]
) -> None:
    """A PostgreSQL journal (GITMEDIC_JOURNAL_URL) is every repository's: its rows are
    keyed by the app's name, so two repositories' apps of one name would share
    incidents and transactions. Refused before anything starts."""
    from gitmedic.bot.controller.journal_url import JOURNAL_URL_ENV

    if len(worlds) < 2 or not env.get(JOURNAL_URL_ENV, "").strip():
        return
    seen: dict[str, str] = {}
    for world, configs in zip(worlds, each, strict=True):
        for config in configs:
            other = seen.setdefault(config.app, world.name)
            if other != world.name:
                raise ValueError(
                    f"app {config.app} is in {other} and in {world.name}: with "
                    f"{JOURNAL_URL_ENV} (one journal for every repository) app names must differ"
                )


def worlds_of(
    settings: ServeSettings,
    args: argparse.Namespace,
    env: Mapping[str, str],
    kind: str,
    entries: list[RepoEntry],
) -> list[RepoWorld]:
    """Each entry's forge and repo: a local folder, or gitmedic's clone of it on GitHub
    under its own state folder."""
    worlds = []
    for entry in entries:
        state = repo_state_dir(settings.state_dir, entry.name)
        own = argparse.Namespace(**{**vars(args), "path": entry.path or None})
        own.namespace = entry.namespace or args.namespace
        if kind == "local":
            from gitmedic.bot.forges.local import LocalForge

            local = LocalForge(Path(entry.repo))
            worlds.append(RepoWorld(local, local.root, lambda: None, entry.name, state, own))
            continue
        repo_env = {**env, "GITHUB_REPOSITORY": entry.repo, CLONE_URL_ENV: entry.clone_url}
        forge, repo, fetch = github_and_clone(replace(settings, state_dir=state), repo_env)
        worlds.append(RepoWorld(forge, repo, fetch, entry.name, state, own))
    return worlds


def forge_and_repo(
    settings: ServeSettings, args: argparse.Namespace, env: Mapping[str, str]
) -> tuple[Forge, Path, Callable[[], object]]:
    kind = args.forge or env.get("GITMEDIC_FORGE", "local")
    if kind == "local":
        from gitmedic.bot.forges.local import LocalForge

        local = LocalForge(settings.repo)
        return local, local.root, lambda: None
    if kind != "github":
        raise ValueError(f"GITMEDIC_FORGE must be local or github, not {kind!r}")
    return github_and_clone(settings, env)


def github_and_clone(
    settings: ServeSettings, env: Mapping[str, str]
) -> tuple[Forge, Path, Callable[[], object]]:
    """The GitHub forge of ``env``, gitmedic's clone of its repository (synced), and how
    to fetch it again: what :func:`wire` takes (tests give it a stand-in GitHub)."""
    from gitmedic.bot.forges.github_env import Clone, clone_url, github_forge_from_env

    forge = github_forge_from_env(env)
    clone = Clone(settings.state_dir / "clone", clone_url(env), forge.git_token)
    forge.fetched = clone.sync  # a branch the bot pushed is read by its SHA at once (the gate)
    return forge, clone.sync(), clone.sync
