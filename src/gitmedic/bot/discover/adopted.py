"""The apps ``run`` and ``serve`` act on in a repository: its config's, else discovered.

A repository without ``.gitmedic/config.yaml`` is acted on as the config ``gitmedic
init`` would write for it (:mod:`gitmedic.bot.discover.apps`): one app per
environment it deploys, each with its own incidents, attempts and lease. Reading
the whole repository as one app would judge two environments' objects together
(a fault in dev seen as the repo's, a fix in one overlay weighed against the other
overlays' pods) and render charts without their environment's values. The
discovered apps are read from exactly the text init writes, through the same
parser as a config file, and adopted for the process
(:func:`gitmedic.reconciler.manifests.app_charts.adopt_config`) so every reader of
the repository's revisions (the gate, the sim, verification) renders each app as
its own. Discovery that finds nothing leaves the whole repository as one app.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from gitmedic.bot.common.exits import UsageError
from gitmedic.reconciler.config import CONFIG_PATH, AppConfig, Config, ConfigError, find_config
from gitmedic.reconciler.manifests.config_file import load_config, parse_config

__all__ = ["DISCOVERED", "acted_apps", "acted_config", "adopted_note", "repo_apps_config"]

DISCOVERED = f"the apps discovered in the repository (it has no {CONFIG_PATH})"


def acted_config(repo: Path, args: argparse.Namespace | None = None) -> Config | None:
    """The config file's apps; without one, the discovered apps, or None when ``args``
    name the one app by ``--path``/``--namespace`` (or discovery finds none). Without
    ``args``: what an earlier call chose. A bad config is a UsageError naming it."""
    from gitmedic.reconciler.manifests.app_charts import adopted_config

    named = args is not None and (getattr(args, "path", None) or getattr(args, "namespace", None))
    if find_config(repo) is None and (named or args is None):
        return adopted_config(repo)
    try:
        return repo_apps_config(repo)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def acted_apps(config: Config | None, args: argparse.Namespace, repo: Path) -> list[AppConfig]:
    """Every app of ``config``, or the one ``--app`` names (or whose folder is ``--path``);
    without a config, the one app ``--path``/``--namespace`` give (default: the repo)."""
    path = (getattr(args, "path", None) or "").strip("/")
    name = getattr(args, "app", None) or ""
    if config is None:
        if name:
            raise UsageError(f"--app {name}: the repository has no {CONFIG_PATH}")
        alone = Path(path).name if path else repo.name
        return [AppConfig(name=alone, path=path, namespace=args.namespace or "default")]
    where = CONFIG_PATH if find_config(repo) else DISCOVERED
    if name:
        named = [app for app in config.apps if app.name == name]
        if not named:
            known = ", ".join(app.name for app in config.apps)
            raise UsageError(f"--app {name}: no such app in {where} (its apps: {known})")
        return named
    if path:
        for app in config.apps:
            if app.path.strip("/") == path:
                return [app]
        raise UsageError(f"no app with path {path!r} in {where}")
    return list(config.apps)


def repo_apps_config(repo: Path) -> Config | None:
    """The repository's config; without one, its discovered apps, adopted for the process
    (None when discovery finds none). Raises ConfigError naming what is wrong."""
    path = find_config(repo)
    if path is not None:
        return load_config(path)
    from gitmedic.reconciler.manifests.app_charts import adopt_config, adopted_config

    adopted = adopted_config(repo)
    if adopted is not None:
        return adopted
    config = discovered_config(repo)
    if config is not None:
        adopt_config(repo, config)
    return config


def discovered_config(repo: Path) -> Config | None:
    """What ``gitmedic init`` would write for ``repo``, read as its config file would be."""
    from gitmedic.bot.discover.apps import discovered_apps
    from gitmedic.reconciler.manifests.discover import discover
    from gitmedic.reconciler.repofs import read_text

    if not discover(repo).proposals:
        return None
    text, _ = discovered_apps(repo)
    data = {"version": 1, "apps": yaml.safe_load(f"apps:\n{text}")["apps"]}
    return parse_config(data, DISCOVERED, read=lambda rel: read_text(repo, rel))


def adopted_note(repo: Path) -> str:
    """What a start says when it acts on discovered apps ('' with a config file)."""
    from gitmedic.reconciler.manifests.app_charts import adopted_config

    config = adopted_config(repo) if find_config(repo) is None else None
    if config is None:
        return ""
    count = len(config.apps)
    return (
        f"no {CONFIG_PATH}: acting on the {count} app{'s' * (count != 1)} discovered in the "
        "repository, as `gitmedic init` would write them (run it to review and commit them)"
    )
