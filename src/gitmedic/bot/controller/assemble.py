"""One app's controller built from its settings: what ``run`` and ``serve`` share.

:func:`loop_configs_of` reads the apps a command acts on (the repo's
``.gitmedic/config.yaml``, else the apps discovery adopts:
:mod:`gitmedic.bot.discover.adopted`) into one :class:`LoopConfig` each, with the
objects the app's namespace neighbours render (refused when two apps render one
object: which one the cluster holds is not in Git). :func:`build_loop` opens the
app's journal (:mod:`gitmedic.bot.controller.journal_url`), its cluster (the sim,
starting from where the app was last known good, or the real cluster through the
shared watch cache), its forge and its detectors (built-in and learned, as the
config chooses) into a :class:`Loop`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.report import Event
from gitmedic.bot.discover.adopted import acted_apps, acted_config
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.config import (
    CONFIG_PATH,
    DEFAULT_POLICY,
    AppConfig,
    Config,
    LeversConfig,
)
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import Journal

if TYPE_CHECKING:
    from gitmedic.reconciler.live_cache import LiveCache

__all__ = ["DEFAULT_POLICY", "build_loop", "loop_config_of", "loop_configs_of", "report_json"]


def loop_configs_of(repo: Path, args: argparse.Namespace, **extra: Any) -> list[LoopConfig]:
    """One loop's settings per app the command acts on (:mod:`gitmedic.bot.discover.adopted`):
    every app of the config (without one, of discovery), or the one ``--app`` names (or
    whose folder is ``--path``); without a config, ``--path``/``--namespace`` name it."""
    config = acted_config(repo, args)
    return [
        _loop_config(repo, config, app, args, dict(extra)) for app in acted_apps(config, args, repo)
    ]


def loop_config_of(repo: Path, args: argparse.Namespace, **extra: Any) -> LoopConfig:
    """The settings of the one app ``args`` picks (the first of the config's without)."""
    config = acted_config(repo, args)
    return _loop_config(repo, config, acted_apps(config, args, repo)[0], args, extra)


def _loop_config(
    repo: Path, config: Config | None, app: AppConfig, args: argparse.Namespace, extra: Any
) -> LoopConfig:
    if config is not None:
        extra.update(_own_objects(repo, config, app))
    for flag, key in (("interval", "interval_s"), ("settle", "settle_s")):
        if getattr(args, flag, None) is not None:
            extra.setdefault(key, float(getattr(args, flag)))
    return LoopConfig(
        app=app.name,
        repo=repo,
        path=app.path.strip("/").removeprefix("."),
        namespace=app.namespace,
        deployer=app.deployer,
        attempts=config.attempts if config else 3,
        sync_timeout_s=app.engine.sync_timeout_s,
        window_s=app.oracles.window_s,
        oracle_interval_s=app.oracles.interval_s,
        failure_limit=app.oracles.failure_limit,
        probes=app.oracles.probes,
        policy=config.policy if config else DEFAULT_POLICY,  # the policy as written: law
        llm=config.llm if config and config.llm.model else None,
        levers=config.levers if config else LeversConfig(),
        **extra,
    )


def report_json(loop: Loop, healthy: bool) -> dict[str, Any]:
    return {"healthy": healthy, "incidents": [r.to_json() for r in loop.reports.values()]}


def watch_cache(
    cluster: str, env: Mapping[str, str], configs: Sequence[LoopConfig], interval_s: float
) -> LiveCache | None:
    """The one watch cache of a real cluster the apps of a process that keeps watching
    share (list + watch per kind, :mod:`gitmedic.reconciler.live_cache`), not a list of
    every kind per app per step; None for the sim. ``run --once`` lists instead."""
    if cluster != "kube":
        return None
    from gitmedic.bot.controller.kube_cluster import KubeSetupError, shared_cache

    try:
        return shared_cache(env, {c.namespace for c in configs}, interval_s=interval_s)
    except KubeSetupError as exc:
        raise UsageError(f"--cluster kube: {exc}") from None


def build_loop(
    config: LoopConfig,
    cluster_kind: str,
    forge: Forge | str,
    state: Path,
    *,
    quiet: bool,
    on_event: Callable[[Event], None] | None = None,  # serve's: log, and yield its lock
    cache: LiveCache | None = None,  # the cluster's watch cache, shared by the apps
    world: Any = None,  # the SimWorld the apps of one run share (sim only; else their own)
) -> Loop:
    from gitmedic.bot.controller.journal_url import open_journal
    from gitmedic.bot.memory.learned import load_learned
    from gitmedic.detectors.builtin import builtin_registry

    learned = load_learned(config.repo, builtin_registry())
    for refused in learned.refused:  # memory that did not load: say so, never run it
        print(f"gitmedic: memory refused: {refused}", file=sys.stderr, flush=True)
    journal = open_journal(state)  # GITMEDIC_JOURNAL_URL's PostgreSQL, else state's SQLite
    cluster = _cluster(config, cluster_kind, _app_config(config), journal, cache, world)
    quiet_or_printed = (lambda e: None) if quiet else _print_event
    return Loop(
        config,
        cluster,
        forge_for(config.repo, forge) if isinstance(forge, str) else forge,
        journal,
        _chosen(list(learned.registry), config.repo),
        on_event=on_event or quiet_or_printed,
    )


def _chosen(detectors: list[Detector], repo: Path) -> list[Detector]:
    """The detectors (built-in and learned) the repo's config includes and does not exclude."""
    config = acted_config(repo)
    if config is None:
        return detectors
    chosen = config.detectors.chosen([d.id for d in detectors])
    return [d for d in detectors if d.id in chosen]


def _print_event(event: Event) -> None:
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(event.at))  # the cluster's clock
    print(f"{at} {event.kind}: {event.text}", file=sys.stderr, flush=True)


def _own_objects(repo: Path, config: Config, app: AppConfig) -> dict[str, Any]:
    """The loop's settings of ``app``'s namespace (bot.controller.siblings): what the other
    apps render, and, when one of them does not, why and what ``app`` renders itself.
    Refuses an app whose objects one of them renders too: which one the cluster holds is
    not in Git, so neither could be judged or fixed."""
    from gitmedic.bot.controller.siblings import sibling_keys
    from gitmedic.reconciler.manifests.shared_namespace import neighbours

    found = neighbours(repo, config, app)
    if found.collision is not None:
        raise UsageError(f"{CONFIG_PATH}: {found.collision.message()}")
    undivided = found.undivided(app)
    own = sibling_keys(found.own) if undivided else frozenset()
    return {"siblings": sibling_keys(found.rendered), "undivided": undivided, "own": own}


def _app_config(config: LoopConfig) -> AppConfig:
    found = acted_config(config.repo)
    apps = found.apps if found else ()
    match = [a for a in apps if a.name == config.app]
    return match[0] if match else AppConfig(config.app, config.path, config.namespace)


SIM_FAULTS_ENV = "GITMEDIC_SIM_FAULTS"


def _runtime_faults(cluster: Any, spec: str) -> None:
    """B-class faults the sim of this process shows (``fault:target;...``): the sim lives
    in the process, so a runtime fault of the world it stands for is named here."""
    from gitmedic.sim.faults.demand import inject_named
    from gitmedic.sim.faults.edit import FaultNotApplicable

    if not spec.strip():
        return
    try:
        inject_named(cluster.sim, spec)
    except FaultNotApplicable as exc:
        raise UsageError(f"{SIM_FAULTS_ENV}: {exc}") from None


def _cluster(
    config: LoopConfig,
    kind: str,
    app: AppConfig,
    journal: Journal,
    cache: LiveCache | None,
    world: Any = None,
) -> Any:
    if kind == "sim":
        from gitmedic.bot.controller.known_good import KnownGoodError, known_good
        from gitmedic.bot.controller.sim_cluster import SimCluster

        try:
            good = known_good(config.repo, app.sim.known_good, journal, config.app)
        except KnownGoodError as exc:
            raise UsageError(f"{CONFIG_PATH}: apps[{app.name}].{exc}") from None
        sim = SimCluster(
            config.repo,
            config.path,
            config.namespace,
            deployer=config.deployer,
            history_rev=good.history_rev,
            known_good=good.revisions,
            world=world,
        )
        _runtime_faults(sim, os.environ.get(SIM_FAULTS_ENV, ""))
        return sim
    from gitmedic.bot.controller.kube_cluster import KubeCluster, KubeSetupError, preflight

    try:
        cluster = KubeCluster(
            config.namespace, app.engine, app.oracles, os.environ, app=config.app, cache=cache
        )
        cluster.siblings = config.siblings
        preflight(cluster.watcher)
    except KubeSetupError as exc:
        raise UsageError(f"--cluster kube: {exc}") from None
    return cluster


def forge_for(repo: Path, kind: str) -> Forge:
    if kind == "local":
        from gitmedic.bot.forges.local import LocalForge

        return LocalForge(repo)
    from gitmedic.bot.forges.github_env import GitHubEnvError, github_forge_from_env, working_clone

    try:
        forge = github_forge_from_env(os.environ)
        # REPO is gitmedic's clone: what the bot writes through the API is fetched into it.
        forge.fetched = working_clone(repo, forge).sync
        forge.fetched()
    except GitHubEnvError as exc:
        raise UsageError(str(exc)) from None
    return forge
