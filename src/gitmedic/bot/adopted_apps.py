"""The apps ``run`` and ``serve`` act on in a repository: its config's, else discovered.

A repository without ``.gitmedic/config.yaml`` is acted on as the config ``gitmedic
init`` would write for it (:mod:`gitmedic.bot.init_discover`): one app per
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

from pathlib import Path

import yaml

from gitmedic.reconciler.config import CONFIG_PATH, Config, find_config, load_config, parse_config

__all__ = ["DISCOVERED", "adopted_note", "repo_apps_config"]

DISCOVERED = f"the apps discovered in the repository (it has no {CONFIG_PATH})"


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
    from gitmedic.bot.init_discover import discovered_apps
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
