"""``gitmedic run REPO``: the whole loop against one manifest repo, until healthy with --once.

The app comes from ``.gitmedic/config.yaml`` when the repo has one (its first
app, or the one whose path is ``--path``), else from ``--path``/``--namespace``.
The config's ``policy`` is taken as written (``rules: []`` is no rule, and
``auto_merge: never`` merges nothing without a person). Without a config, or
with a ``policy`` that gives no ``rules``, the built-in rules let fixes that
restore fields from Git history (playbook and bisect strategies) and
guard-checked memory merge as low risk; the safe defaults still hold (RBAC,
Secrets, deletions, new images are never low).

``--cluster sim``: the sim deploys ``main`` of REPO and is the cluster; all
waits run on its fake clock. ``--cluster kube`` needs a reachable cluster and a
GitOps engine from the config (:mod:`gitmedic.bot.loop.kube_cluster`); a setup
that cannot work (no kubeconfig, a refused engine token) exits 2 with the reason.
The sim lives in the process, so runtime (B-class) faults of the world it stands
for come from ``GITMEDIC_SIM_FAULTS`` (``memory-growth:cartservice;wedge:ad``,
:mod:`gitmedic.sim.faults.demand`); an unknown fault exits 2.
``--forge local`` is the local forge in REPO; ``--forge github`` reads GitHub
from the environment (:mod:`gitmedic.bot.github_env`), with REPO gitmedic's clone
of it: its ``main`` is reset to its origin's, at the start and after every write
through the API that makes commits (a PR's branch, a merge, a revert), whose
commits are fetched, so the gate and the sim read what GitHub holds.

One writer per app: the process takes the app's writer lease in the journal
(``.git/gitmedic/journal.sqlite``) before it does anything, and a second
``gitmedic run`` on the same repo exits at once saying which process holds it.
A restarted run first carries on every transaction the journal holds unsettled
(a run killed mid-transaction), then answers what fires.

Exit codes: 0 healthy, 1 not healthy (out of attempts, escalated or held, or
the app held by another process), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmedic.bot.loop.loop import Loop, LoopConfig
from gitmedic.bot.loop.report import Event
from gitmedic.bot.loop.wiring import Cluster
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.config import (
    CONFIG_PATH,
    DEFAULT_POLICY,
    AppConfig,
    Config,
    ConfigError,
    LeversConfig,
    find_config,
    load_config,
)
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import Journal

EXIT_OK, EXIT_UNHEALTHY, EXIT_ERROR = 0, 1, 2
__all__ = ["DEFAULT_POLICY", "build_loop", "loop_config_of", "report_json", "run_run"]


def run_run(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli import UsageError
    from gitmedic.bot.extras import MEMORY_ENGINE, require

    require(MEMORY_ENGINE)

    repo = Path(args.repo).resolve()
    if not (repo / ".git").exists():
        raise UsageError(f"{repo}: not a git repository")
    loop_config = loop_config_of(repo, args)
    state = repo / ".git" / "gitmedic"
    loop = build_loop(loop_config, args.cluster, args.forge, state, quiet=args.json)
    grant = loop.lease.hold()
    if not grant.acquired:
        until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(grant.expires))
        print(
            f"gitmedic: {loop_config.app} is held by {grant.holder} (lease until {until}); "
            "another gitmedic acts on it, so this one exits",
            file=sys.stderr,
        )
        if args.json:
            print(json.dumps({"healthy": False, "incidents": [], "held_by": grant.holder}))
        return EXIT_UNHEALTHY
    try:
        healthy = loop.run_once() if args.once else _forever(loop)
        if healthy:
            _note_healthy(loop)
        if args.json:
            print(json.dumps(report_json(loop, healthy), indent=1))
    finally:
        loop.lease.release()
    return EXIT_OK if healthy else EXIT_UNHEALTHY


def _note_healthy(loop: Loop) -> None:
    """The deployed main ran healthy: the sim's known-good from now on (known_good)."""
    from gitmedic.bot.loop.known_good import note_healthy
    from gitmedic.bot.loop.wiring import git

    head = git(loop.config.repo, "rev-parse", loop.forge.default_branch())
    note_healthy(loop.journal, loop.config.app, head, loop.cluster.check, loop.clock.now())


def loop_config_of(repo: Path, args: argparse.Namespace, **extra: Any) -> LoopConfig:
    config = _config(repo)
    app = _app(config, args, repo)
    siblings = _own_objects(repo, config, app) if config is not None else frozenset()
    for flag, key in (("interval", "interval_s"), ("settle", "settle_s")):
        if getattr(args, flag, None) is not None:
            extra.setdefault(key, float(getattr(args, flag)))
    return LoopConfig(
        app=app.name,
        repo=repo,
        path=app.path.strip("/").removeprefix("."),
        namespace=app.namespace,
        attempts=config.attempts if config else 3,
        sync_timeout_s=app.engine.sync_timeout_s,
        window_s=app.oracles.window_s,
        oracle_interval_s=app.oracles.interval_s,
        failure_limit=app.oracles.failure_limit,
        probes=app.oracles.probes,
        policy=config.policy if config else DEFAULT_POLICY,  # the policy as written: law
        llm=config.llm if config and config.llm.model else None,
        levers=config.levers if config else LeversConfig(),
        siblings=siblings,
        **extra,
    )


def report_json(loop: Loop, healthy: bool) -> dict[str, Any]:
    return {"healthy": healthy, "incidents": [r.to_json() for r in loop.reports.values()]}


def build_loop(
    config: LoopConfig,
    cluster_kind: str,
    forge: Forge | str,
    state: Path,
    *,
    quiet: bool,
    on_event: Callable[[Event], None] | None = None,  # serve's: log, and yield its lock
    view: Callable[[Cluster], Cluster] = lambda cluster: cluster,  # serve's yielding clock
) -> Loop:
    from gitmedic.bot.memory.learned import load_learned
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.transaction import Journal

    learned = load_learned(config.repo, builtin_registry())
    for refused in learned.refused:  # memory that did not load: say so, never run it
        print(f"gitmedic: memory refused: {refused}", file=sys.stderr, flush=True)
    journal = Journal(state / "journal.sqlite")
    cluster = view(_cluster(config, cluster_kind, _app_config(config), journal))
    quiet_or_printed = (lambda e: None) if quiet else _print_event
    return Loop(
        config,
        cluster,
        _forge(config.repo, forge) if isinstance(forge, str) else forge,
        journal,
        _chosen(list(learned.registry), config.repo),
        on_event=on_event or quiet_or_printed,
    )


def _chosen(detectors: list[Detector], repo: Path) -> list[Detector]:
    """The detectors (built-in and learned) the repo's config includes and does not exclude."""
    path = find_config(repo)
    if path is None:
        return detectors
    chosen = load_config(path).detectors.chosen([d.id for d in detectors])
    return [d for d in detectors if d.id in chosen]


def _forever(loop: Loop) -> bool:
    try:
        while True:
            loop.tick()
    except KeyboardInterrupt:
        return loop.healthy


def _print_event(event: Event) -> None:
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(event.at))  # the cluster's clock
    print(f"{at} {event.kind}: {event.text}", file=sys.stderr, flush=True)


def _config(repo: Path) -> Config | None:
    from gitmedic.bot.cli import UsageError

    path = find_config(repo)
    if path is None:
        return None
    try:
        return load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _app(config: Config | None, args: argparse.Namespace, repo: Path) -> AppConfig:
    from gitmedic.bot.cli import UsageError

    path = (args.path or "").strip("/")
    if config is None:
        name = Path(path).name if path else repo.name
        return AppConfig(name=name, path=path, namespace=args.namespace or "default")
    for app in config.apps:
        if not path or app.path.strip("/") == path:
            return app
    raise UsageError(f"no app with path {path!r} in .gitmedic/config.yaml")


def _own_objects(repo: Path, config: Config, app: AppConfig) -> frozenset[tuple[str, str]]:
    """What the other apps of ``app``'s namespace render (bot.loop.siblings). Refuses an
    app whose objects one of them renders too: which one the cluster holds is not in
    Git, so neither could be judged or fixed."""
    from gitmedic.bot.cli import UsageError
    from gitmedic.bot.loop.siblings import sibling_keys
    from gitmedic.reconciler.manifests.shared_namespace import neighbours

    found = neighbours(repo, config, app)
    if found.collision is not None:
        raise UsageError(f"{CONFIG_PATH}: {found.collision.message()}")
    return sibling_keys(found.rendered)


def _app_config(config: LoopConfig) -> AppConfig:
    found = _config(config.repo)
    apps = found.apps if found else ()
    match = [a for a in apps if a.path.strip("/").removeprefix(".") == config.path]
    return match[0] if match else AppConfig(config.app, config.path, config.namespace)


SIM_FAULTS_ENV = "GITMEDIC_SIM_FAULTS"


def _runtime_faults(cluster: Any, spec: str) -> None:
    """B-class faults the sim of this process shows (``fault:target;...``): the sim lives
    in the process, so a runtime fault of the world it stands for is named here."""
    from gitmedic.bot.cli import UsageError
    from gitmedic.sim.faults.demand import inject_named
    from gitmedic.sim.faults.edit import FaultNotApplicable

    if not spec.strip():
        return
    try:
        inject_named(cluster.sim, spec)
    except FaultNotApplicable as exc:
        raise UsageError(f"{SIM_FAULTS_ENV}: {exc}") from None


def _cluster(config: LoopConfig, kind: str, app: AppConfig, journal: Journal) -> Any:
    from gitmedic.bot.cli import UsageError

    if kind == "sim":
        from gitmedic.bot.loop.known_good import KnownGoodError, known_good
        from gitmedic.bot.loop.sim_cluster import SimCluster

        try:
            good = known_good(config.repo, app.sim.known_good, journal, config.app)
        except KnownGoodError as exc:
            raise UsageError(f"{CONFIG_PATH}: apps[{app.name}].{exc}") from None
        sim = SimCluster(
            config.repo,
            config.path,
            config.namespace,
            history_rev=good.history_rev,
            known_good=good.revisions,
        )
        _runtime_faults(sim, os.environ.get(SIM_FAULTS_ENV, ""))
        return sim
    from gitmedic.bot.loop.kube_cluster import KubeCluster, KubeSetupError, preflight

    try:
        cluster = KubeCluster(config.namespace, app.engine, app.oracles, os.environ, app=config.app)
        cluster.siblings = config.siblings
        preflight(cluster.watcher)
    except KubeSetupError as exc:
        raise UsageError(f"--cluster kube: {exc}") from None
    return cluster


def _forge(repo: Path, kind: str) -> Forge:
    from gitmedic.bot.cli import UsageError

    if kind == "local":
        from gitmedic.bot.forges.local import LocalForge

        return LocalForge(repo)
    from gitmedic.bot.github_env import GitHubEnvError, github_forge_from_env, working_clone

    try:
        forge = github_forge_from_env(os.environ)
        # REPO is gitmedic's clone: what the bot writes through the API is fetched into it.
        forge.fetched = working_clone(repo, forge).sync
        forge.fetched()
    except GitHubEnvError as exc:
        raise UsageError(str(exc)) from None
    return forge
