"""``gitmedic run REPO``: the whole loop against one manifest repo, until healthy with --once.

The apps come from ``.gitmedic/config.yaml`` when the repo has one: every app,
each with its own loop, incidents, attempts and writer lease, stepped in turn, one
interval passing after each round, or the one ``--app`` names (or
whose path is ``--path``). Without a config, the apps ``gitmedic init`` would
write are acted on the same way (:mod:`gitmedic.bot.discover.adopted`), unless
``--path``/``--namespace`` name the one app to act on. An app
the sim cannot deploy (its manifests do not render) is said, naming the file, and
counts as unhealthy; the others run. ``--forge github`` takes ``--cluster kube``
(:mod:`gitmedic.bot.controller.start_line`), and every start prints one line naming forge,
repository, cluster and context, engine and apps.
The config's ``policy`` is taken as written (``rules: []`` is no rule, and
``auto_merge: never`` merges nothing without a person). Without a config, or
with a ``policy`` that gives no ``rules``, the built-in rules let fixes that
restore fields from Git history (playbook and bisect strategies) and
guard-checked memory merge as low risk; the safe defaults still hold (RBAC,
Secrets, deletions, new images are never low).

``--cluster sim``: the sim deploys ``main`` of REPO and is the cluster; all
waits run on its fake clock, one for every app of the run (:class:`SimWorld`), so
20 apps take about the simulated time of their slowest, and ``--once`` ends by
saying how long the run took on the cluster's clock. ``--cluster kube`` needs a
reachable cluster and a GitOps engine from the config
(:mod:`gitmedic.bot.controller.kube_cluster`); a setup that cannot work (no kubeconfig, a
refused engine token) exits 2 with the reason.
The sim lives in the process, so runtime (B-class) faults of the world it stands
for come from ``GITMEDIC_SIM_FAULTS`` (``memory-growth:cartservice;wedge:ad``,
:mod:`gitmedic.sim.faults.demand`); an unknown fault exits 2.
``--forge local`` is the local forge in REPO; ``--forge github`` reads GitHub
from the environment (:mod:`gitmedic.bot.forges.github_env`), with REPO gitmedic's clone
of it: its ``main`` is reset to its origin's, at the start and after every write
through the API that makes commits (a PR's branch, a merge, a revert), whose
commits are fetched, so the gate and the sim read what GitHub holds.

One writer per app: the process takes each app's writer lease in the journal
(``.git/gitmedic/journal.sqlite``, or the PostgreSQL database
``GITMEDIC_JOURNAL_URL`` names: :mod:`gitmedic.bot.controller.journal_url`) before it does
anything, and leaves an app another ``gitmedic run`` holds, saying which process
holds it.
With ``--cluster kube`` and no ``--once``, the apps read the cluster through one
watch cache (:mod:`gitmedic.reconciler.live_cache`), not a list per app per step.
A restarted run first carries on every transaction the journal holds unsettled
(a run killed mid-transaction), then answers what fires.

An app of a namespace whose other app does not render cannot be told apart from it
(:mod:`gitmedic.bot.controller.siblings`): it is said, naming that app's file and line; its
loop judges only what it renders itself, and it is never reported healthy (``error``
in ``--json``), since what was left unjudged is not "nothing found".

Exit codes: 0 every app healthy, 1 one is not (out of attempts, escalated or
held, held by another process, not deployable, or not told apart), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.controller.assemble import (
    build_loop,
    forge_for,
    loop_configs_of,
    report_json,
    watch_cache,
)
from gitmedic.bot.controller.config_check import check_config
from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.transact import share_dashboard
from gitmedic.reconciler.forge import Forge

if TYPE_CHECKING:
    from gitmedic.reconciler.live_cache import LiveCache

EXIT_OK, EXIT_UNHEALTHY, EXIT_ERROR = 0, 1, 2
__all__ = ["run_on", "run_run"]


def run_run(args: argparse.Namespace) -> int:
    from gitmedic.bot.common.extras import MEMORY_ENGINE, require
    from gitmedic.bot.controller.journal_url import require_driver
    from gitmedic.bot.controller.start_line import check_cluster_for_forge

    require(MEMORY_ENGINE)
    require_driver()

    repo = Path(args.repo).resolve()
    if not (repo / ".git").exists():
        raise UsageError(f"{repo}: not a git repository")
    cluster = check_cluster_for_forge(args.forge, args.cluster)
    check_config(repo)  # a bad config changes nothing: refused before the forge's files
    return run_on(repo, args, cluster, forge_for(repo, args.forge))


def run_on(repo: Path, args: argparse.Namespace, cluster: str, forge: Forge) -> int:
    """:func:`run_run` past its checks, with the forge and cluster chosen. The tests drive
    the GitHub stand-in over the sim through it, in-process: a pairing no flag, setting
    or environment reaches (:func:`gitmedic.bot.controller.start_line.check_cluster_for_forge`)."""
    from gitmedic.bot.discover.adopted import adopted_note

    if cluster == "kube":  # charts render for the cluster's version from the first
        from gitmedic.bot.controller.kube_cluster import record_version_early

        record_version_early(os.environ)
    configs = loop_configs_of(repo, args)
    if note := adopted_note(repo):
        print(f"gitmedic: {note}", file=sys.stderr, flush=True)
    state = repo / ".git" / "gitmedic"
    interval = min((c.interval_s for c in configs), default=60.0)
    cache = None if args.once else watch_cache(cluster, os.environ, configs, interval)
    try:
        return _run_loops(args, repo, cluster, forge, configs, state, cache)
    finally:
        if cache is not None:
            cache.stop()


def _run_loops(
    args: argparse.Namespace,
    repo: Path,
    cluster: str,
    forge: Forge,
    configs: list[LoopConfig],
    state: Path,
    cache: LiveCache | None,
) -> int:
    from gitmedic.bot.controller.start_line import start_line

    loops, broken = _loops(configs, cluster, forge, state, quiet=args.json, cache=cache)
    began = loops[0].clock.now() if loops else 0.0
    line = start_line(args.forge, forge, repo, cluster, loops, apps=configs, broken=broken)
    print(line, file=sys.stderr, flush=True)
    held = {loop.config.app: holder for loop in loops if (holder := _held_by(loop))}
    acting = [loop for loop in loops if loop.config.app not in held]
    try:
        outcome = _run_once(acting) if args.once else _forever(acting)
    finally:
        for loop in acting:
            loop.lease.release()
    # judged on its own objects alone, an app is not known to be healthy (siblings)
    healthy = {lp.config.app: outcome[lp.config.app] and not lp.config.undivided for lp in acting}
    if args.once and loops:
        took = loops[0].clock.now() - began
        print(
            f"gitmedic: run --once took {took:.0f} s of the cluster's clock, {len(loops)} app(s)",
            file=sys.stderr,
            flush=True,
        )
    for loop in acting:
        if healthy[loop.config.app]:
            _note_healthy(loop)
    if args.json:
        print(json.dumps(report_json_apps(acting, healthy, held, broken), indent=1))
    return EXIT_OK if all(healthy.values()) and not held and not broken else EXIT_UNHEALTHY


def _loops(
    configs: list[LoopConfig],
    cluster: str,
    forge: Forge,
    state: Path,
    *,
    quiet: bool,
    cache: LiveCache | None = None,
) -> tuple[list[Loop], dict[str, str]]:
    """A loop per app; an app the sim cannot deploy (its manifests do not render) is
    said, naming the file, and left unhealthy while the other apps run."""
    from gitmedic.bot.controller.sim_cluster import SimWorld
    from gitmedic.sim.engine import ManifestLoadError

    loops, broken, world = [], {}, SimWorld()  # one clock for every app's sim
    for config in configs:
        if config.undivided:
            print(f"gitmedic: {config.app}: {config.undivided}", file=sys.stderr)
        try:
            loops.append(
                build_loop(config, cluster, forge, state, quiet=quiet, cache=cache, world=world)
            )
        except ManifestLoadError as exc:
            broken[config.app] = str(exc)
            print(f"gitmedic: {config.app}: cannot deploy it: {exc}", file=sys.stderr)
    share_dashboard([loop.txns for loop in loops])  # one issue, a section per app
    return loops, broken


def _held_by(loop: Loop) -> str:
    """Take the app's writer lease: '', or (said on stderr) the process that holds it."""
    grant = loop.lease.hold()
    if grant.acquired:
        return ""
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(grant.expires))
    print(
        f"gitmedic: {loop.config.app} is held by {grant.holder} (lease until {until}); "
        "another gitmedic acts on it, so this one leaves it",
        file=sys.stderr,
    )
    return grant.holder


def _run_once(loops: list[Loop], max_seconds: float = 3600.0) -> dict[str, bool]:
    """Each app until healthy for its settle time or out of attempts, watched side by side:
    a round ticks every app not done yet, then the clock they share (the sim's
    :class:`SimWorld`, or the system's) is slept on until the earliest of their next due
    times (:meth:`Loop.next_due`: an interval, or a transaction's deadline), so the apps'
    waits overlap instead of adding up. Per app, what :meth:`Loop.run_once` decides for
    one: never healthy while a transaction of it is in flight."""
    if not loops:
        return {}
    clock = loops[0].clock
    deadline = clock.now() + max_seconds
    outcome: dict[str, bool] = {}
    healthy_since: dict[str, float] = {}
    while len(outcome) < len(loops):
        acting = [loop for loop in loops if loop.config.app not in outcome]
        for loop in acting:
            loop.step()
        clock.sleep(max(0.0, min(loop.next_due() for loop in acting) - clock.now()))
        now = clock.now()
        for loop in acting:
            app = loop.config.app
            if loop.healthy and not loop.in_flight():
                # Healthy long enough for an alert's ``for`` window to have fired.
                since = healthy_since.setdefault(app, now)
                if now - since >= loop.config.settle_s:
                    outcome[app] = True
            else:
                healthy_since.pop(app, None)
                if loop._gave_up():  # Loop.run_once's own test, per app
                    outcome[app] = False
            if app not in outcome and now >= deadline:
                outcome[app] = loop.healthy and not loop.in_flight()
    return {loop.config.app: outcome[loop.config.app] for loop in loops}


def report_json_apps(
    loops: list[Loop],
    healthy: dict[str, bool],
    held: dict[str, str],
    broken: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Every app's report under ``apps``, and the incidents of all of them; with one app,
    that app's report alone (the shape scripts read before there were several)."""
    apps = [
        {"app": lp.config.app, **report_json(lp, healthy[lp.config.app])}
        | ({"error": lp.config.undivided} if lp.config.undivided else {})
        for lp in loops
    ]
    apps += [
        {"app": app, "healthy": False, "incidents": [], "held_by": holder}
        for app, holder in held.items()
    ]
    apps += [
        {"app": app, "healthy": False, "incidents": [], "error": error}
        for app, error in (broken or {}).items()
    ]
    if len(apps) == 1:  # one app: its report as it always was
        return {k: v for k, v in apps[0].items() if k != "app"}
    return {
        "healthy": all(a["healthy"] for a in apps),
        "incidents": [i for a in apps for i in a["incidents"]],
        "apps": apps,
    }


def _note_healthy(loop: Loop) -> None:
    """The deployed main ran healthy: the sim's known-good from now on (known_good)."""
    from gitmedic.bot.controller.known_good import note_healthy
    from gitmedic.bot.controller.wiring import git

    head = git(loop.config.repo, "rev-parse", loop.forge.default_branch())
    note_healthy(loop.journal, loop.config.app, head, loop.cluster.check, loop.clock.now())


def _forever(loops: list[Loop]) -> dict[str, bool]:
    """Every app stepped in turn, one interval passing after each round on the clock they
    share (as in :func:`_run_once`), until interrupted; how each stood then."""
    interval = min((loop.config.interval_s for loop in loops), default=0.0)
    try:
        while loops:
            for loop in loops:
                loop.step()
            loops[0].clock.sleep(interval)
    except KeyboardInterrupt:
        pass
    return {loop.config.app: loop.healthy for loop in loops}
