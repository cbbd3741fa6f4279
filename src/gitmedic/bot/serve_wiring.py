"""``gitmedic serve`` assembled: forge, clone, loop, live actions, monitor thread, service.

The monitor is the loop of ``gitmedic run`` in a thread of the same process: each
interval (system time, an :class:`threading.Event` wait so shutdown is prompt) it
fetches the clone, evaluates and answers incidents, then lets
:class:`~gitmedic.bot.actions_live.LiveActions` carry what people asked for
(retries, watches, transactions waiting for approval). With ``--cluster sim``
each step ends by running the sim for the interval (the sim's time passes only
when its clock is slept on), so an incident outlives its debounce and reaches
a transaction by monitor steps alone; a real cluster's clock is not slept on
there, since the wall-clock wait between steps is that interval already. Comment commands and the
monitor share one :class:`~gitmedic.bot.serve_lock.SharedLock`, so a webhook
never acts while a step is half done, and :meth:`MonitorThread.stop` finishes
the current step before returning.

The monitor does not keep that lock for a whole transaction: the loop reports
every persisted step as an event, and serve's event handler logs it and yields
the lock to any queued command; the cluster's clock, as the loop sees it, yields
it around every wait (a sync poll, the verification window). A ``/gitmedic
hold`` arriving mid-transaction is thus answered at the next step boundary and
the merge step, which reads the hold, sees it.

With ``--cluster kube`` every app reads the cluster through one watch cache
(:mod:`gitmedic.reconciler.live_cache`, a list and a watch per kind, started before
the first step and stopped after the last), not a list of every kind per app per step.

With ``--forge github`` the repo is gitmedic's clone under the state directory
(:mod:`gitmedic.bot.github_env`), fetched before every use: the monitor's step,
every command, and the changed-files look-up of a merge.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.actions_live import LiveActions
from gitmedic.bot.dashboard_ticks import DashboardDesk
from gitmedic.bot.loop.checks import AlertFeed
from gitmedic.bot.loop.loop import Loop, LoopConfig
from gitmedic.bot.loop.report import Event
from gitmedic.bot.loop.transact import share_dashboard
from gitmedic.bot.loop.wiring import Cluster
from gitmedic.bot.notify import Notifier
from gitmedic.bot.retry_resolve import retry_queued
from gitmedic.bot.serve_apps import AppsActions, app_state_dir
from gitmedic.bot.serve_health import DEFAULT_STALL_INTERVALS, Heartbeat
from gitmedic.bot.serve_lock import SharedLock, YieldingClock
from gitmedic.bot.serve_metrics import MonitorMetrics
from gitmedic.bot.serve_settings import ServeSettings, build_service, git_changed_files
from gitmedic.bot.serve_shards import Shards, shard_settings
from gitmedic.bot.server.handlers import ChangedFiles
from gitmedic.bot.server.metrics import Metrics
from gitmedic.bot.server.service import Service
from gitmedic.bot.start_line import start_line
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.config import ProbeConfig
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.sim.engine import ManifestLoadError

if TYPE_CHECKING:
    from gitmedic.reconciler.live_cache import LiveCache

log = logging.getLogger(__name__)


class MonitorThread:
    def __init__(
        self,
        step: Callable[[], None],
        interval_s: float,
        lock: AbstractContextManager[None],
        heartbeat: Heartbeat | None = None,
    ) -> None:
        self.step, self.interval_s, self.lock = step, interval_s, lock
        self.heartbeat = heartbeat or Heartbeat(interval_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gitmedic-monitor", daemon=True)
        self.steps = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Ask the monitor to stop and wait for the step in progress to finish."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def step_once(self) -> None:
        """One monitor step under the shared lock; a failure is logged, never raised."""
        try:
            with self.lock:
                self.step()
        except Exception:  # one failed step is logged; the next interval tries again
            log.exception("monitor step failed")
        else:
            self.heartbeat.passed()  # a failed step is no progress (serve_health)
        self.steps += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self.step_once()
            self._stop.wait(self.interval_s)


@dataclass
class Served:
    service: Service
    monitor: MonitorThread
    actions: LiveActions | AppsActions  # LiveActions when the config has one app
    repo: Path
    loops: list[Loop]
    configs: list[LoopConfig] = field(default_factory=list)  # every app's, deployable or not
    broken: dict[str, str] = field(default_factory=dict)  # app -> why it cannot be deployed
    shards: Shards | None = None  # --shard-leases: the apps this replica holds a Lease of
    cache: LiveCache | None = None  # --cluster kube: the cluster's watch cache, all apps'

    @property
    def loop(self) -> Loop:
        return self.loops[0]

    @contextmanager
    def running(self) -> Iterator[Served]:
        if self.shards:
            self.shards.start()
        self.monitor.start()
        try:
            yield self
        finally:
            self.monitor.stop()
            if self.shards:  # after the last step: the others may take the apps at once
                self.shards.stop()
            for loop in self.loops:
                loop.lease.release()  # the next serve need not wait for it to expire
            if self.cache is not None:  # after the last step: no snapshot reads it now
                self.cache.stop()


def assemble(settings: ServeSettings, args: argparse.Namespace, env: Mapping[str, str]) -> Served:
    from gitmedic.bot.adopted_apps import adopted_note
    from gitmedic.bot.start_line import check_cluster_for_forge

    kind = args.forge or env.get("GITMEDIC_FORGE", "local")
    # a real forge is never judged by the sim: checked before anything is cloned or built
    given = args.cluster or env.get("GITMEDIC_CLUSTER")
    args.cluster = check_cluster_for_forge(kind, given)
    forge, repo, fetch = _forge_and_repo(settings, args, env)
    served = wire(settings, args, env, forge, repo, fetch)
    if note := adopted_note(repo):
        log.info(note)
    apps, broken = served.configs, served.broken
    line = start_line(kind, forge, repo, args.cluster, served.loops, env, apps=apps, broken=broken)
    log.info(f"{line}; {served.shards.describe()}" if served.shards else line)
    return served


def wire(
    settings: ServeSettings,
    args: argparse.Namespace,
    env: Mapping[str, str],
    forge: Forge,
    repo: Path,
    fetch: Callable[[], object],
) -> Served:
    """Everything but the forge: a loop and live actions per app, and the service."""
    from gitmedic.bot.run_cmd import loop_configs_of

    interval = float(args.interval or env.get("GITMEDIC_INTERVAL", "60"))
    cluster = args.cluster or env.get("GITMEDIC_CLUSTER", "sim")
    if cluster == "kube":  # charts render for the cluster's version from the first
        from gitmedic.bot.loop.kube_cluster import record_version_early

        record_version_early(env)
    configs = loop_configs_of(repo, args, interval_s=interval)
    cache = _watch_cache(cluster, env, configs, interval)
    try:
        return _wire(settings, args, env, forge, repo, fetch, interval, cluster, configs, cache)
    except BaseException:
        if cache is not None:
            cache.stop()
        raise


def _watch_cache(
    cluster: str, env: Mapping[str, str], configs: list[LoopConfig], interval: float
) -> LiveCache | None:
    """One watch cache of the real cluster for every app (list + watch per kind), not a
    list of every kind per app per step (:mod:`gitmedic.reconciler.live_cache`)."""
    if cluster != "kube":
        return None
    from gitmedic.bot.loop.kube_cluster import KubeSetupError, shared_cache

    try:
        return shared_cache(env, {c.namespace for c in configs}, interval_s=interval)
    except KubeSetupError as exc:
        raise ValueError(f"--cluster kube: {exc}") from None  # as run says it


def _wire(
    settings: ServeSettings,
    args: argparse.Namespace,
    env: Mapping[str, str],
    forge: Forge,
    repo: Path,
    fetch: Callable[[], object],
    interval: float,
    cluster: str,
    configs: list[LoopConfig],
    cache: LiveCache | None,
) -> Served:
    lock = SharedLock(fetch)
    metrics = Metrics()
    heartbeat = _heartbeat(interval, env)
    notifier = _notifier(env)
    states = [app_state_dir(settings.state_dir, c.app, len(configs)) for c in configs]
    apps, wired, broken = [], [], {}
    for config, state in zip(configs, states, strict=True):
        try:
            apps.append(
                _wire_app(config, cluster, forge, state, lock, metrics, heartbeat, notifier, cache)
            )
        except ManifestLoadError as exc:  # said, and the other apps served (as run does)
            broken[config.app] = str(exc)
            log.error("%s: cannot deploy it: %s", config.app, exc)
            continue
        wired.append(config)
    if not apps:
        raise ValueError(f"no app can be deployed: {'; '.join(broken.values())}")
    changed = _fetched(fetch, git_changed_files(repo))
    each = [app.actions for app in apps]
    actions = each[0] if len(each) == 1 else AppsActions(each, [c.path for c in wired], changed)
    stepping: list[str] = []  # the app the monitor steps now
    shards = _shards(args, env, apps, stepping)

    def step() -> None:
        for app in apps:
            if shards is None or shards.holds(app.loop.config.app):
                stepping[:] = [app.loop.config.app]
                try:
                    app.step(interval)
                finally:
                    stepping.clear()
        # Commands and the apps' work move transactions the loops did not drive: the
        # dashboard's boxes follow them (no forge call when nothing changed). Once per
        # monitor step: the issue renders every app's journal, so once per app was
        # O(apps^2) journal reads a step (1,000,000 with 1,000 apps).
        apps[0].loop.txns.refresh_dashboard()

    share_dashboard([a.loop.txns for a in apps])  # one issue, a section per app
    desk = DashboardDesk([(a.loop.txns.view, a.loop.txns.dashboard) for a in apps], lock)
    service = build_service(
        settings, forge, actions, changed, repo=repo, metrics=metrics, dashboard=desk
    )
    service.liveness = heartbeat.stalled
    monitor = MonitorThread(step, interval, lock, heartbeat)
    loops = [app.loop for app in apps]
    return Served(service, monitor, actions, repo, loops, configs, broken, shards, cache)


def _shards(
    args: argparse.Namespace, env: Mapping[str, str], apps: list[_App], stepping: list[str]
) -> Shards | None:
    """With --shard-leases: the coordinator (first round done), and each loop's writer
    lease backed by its app's Kubernetes Lease."""
    from gitmedic.reconciler.leases.app_lease import ShardLease
    from gitmedic.reconciler.transaction.lease import this_process

    settings = shard_settings(args, env)
    if settings is None:
        return None
    loops = {app.loop.config.app: app.loop for app in apps}

    def busy(app: str) -> bool:  # not handed over mid-step or mid-transaction
        return app in stepping or bool(loops[app].txns.unsettled())

    shards = Shards.of(settings, list(loops), this_process(), busy)
    for name, loop in loops.items():
        loop.lease = ShardLease.of(shards.coordinator, loop.journal, name, loop.config.lock_ttl_s)
    return shards


@dataclass
class _App:
    loop: Loop
    actions: LiveActions
    recorder: MonitorMetrics
    clock: YieldingClock

    def step(self, interval: float) -> None:
        try:
            self.loop.step()
            self.actions.work()  # the dashboard follows once all apps stepped (wire)
            self.recorder.after_step(self.loop)
        finally:  # the sim's time runs the interval even after a failed step
            self.clock.elapse(interval)


def _heartbeat(interval: float, env: Mapping[str, str]) -> Heartbeat:
    raw = env.get("GITMEDIC_HEALTH_STALL_INTERVALS", str(DEFAULT_STALL_INTERVALS))
    try:
        return Heartbeat(interval, float(raw))
    except ValueError as exc:
        raise ValueError(f"GITMEDIC_HEALTH_STALL_INTERVALS={raw!r}: {exc}") from None


def _notifier(env: Mapping[str, str]) -> Notifier | None:
    url = env.get("GITMEDIC_NOTIFY_URL", "")
    return Notifier(url) if url else None


def _wire_app(
    config: LoopConfig,
    cluster: str,
    forge: Forge,
    state: Path,
    lock: SharedLock,
    metrics: Metrics,
    heartbeat: Heartbeat,
    notifier: Notifier | None,
    cache: LiveCache | None = None,
) -> _App:
    from gitmedic.bot.run_cmd import build_loop

    recorded: list[MonitorMetrics] = []  # set once the loop's journal exists

    def on_event(event: Event) -> None:
        heartbeat.beat()  # each persisted step of a transaction is progress
        for recorder in recorded:
            recorder.on_event(event)
        log.info(
            "%s: %s: %s",
            config.app,
            event.kind,
            event.text,
            extra={"event": event.kind, "pr": event.data.get("pr"), "app": config.app},
        )
        lock.yield_to_waiters()  # every event is reported between two steps

    clocks: list[YieldingClock] = []

    def view(inner: Cluster) -> Cluster:
        # The sim's clock runs the simulated cluster when slept on: not an idle wait.
        yielding = YieldingCluster(inner, lock, idle_sleep=cluster != "sim", on_wake=heartbeat.beat)
        clocks.append(yielding.clock)
        return yielding

    loop = build_loop(
        config, cluster, forge, state, quiet=True, on_event=on_event, view=view, cache=cache
    )
    actions = LiveActions(
        forge, loop.journal, loop.ports, loop.clock, app=config.app,
        mu_now=loop.mu_now, retry=lambda incident: retry_queued(loop, incident), lock=lock,
        resume_ports=lambda plan: loop.ports(plan=plan), machine=loop.txns.runner.config,
    )  # fmt: skip
    recorded.append(MonitorMetrics(metrics, loop.journal, config.app, notifier=notifier))
    (clock,) = clocks
    return _App(loop, actions, recorded[0], clock)


def _forge_and_repo(
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
    from gitmedic.bot.github_env import Clone, clone_url, github_forge_from_env

    forge = github_forge_from_env(env)
    clone = Clone(settings.state_dir / "clone", clone_url(env), forge.git_token)
    forge.fetched = clone.sync  # a branch the bot pushed is read by its SHA at once (the gate)
    return forge, clone.sync(), clone.sync


def _fetched(fetch: Callable[[], object], changed: ChangedFiles) -> ChangedFiles:
    def files(sha: str) -> tuple[str, ...]:
        fetch()
        return changed(sha)

    return files


class YieldingCluster:
    """The cluster as serve's loop sees it: the same, but its clock yields the shared lock."""

    def __init__(
        self,
        inner: Cluster,
        lock: SharedLock,
        *,
        idle_sleep: bool,
        on_wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.inner = inner
        self.engine_name = inner.engine_name
        self.clock = YieldingClock(inner.clock, lock, idle_sleep=idle_sleep, on_wake=on_wake)

    def snapshot(self) -> Snapshot:
        return self.inner.snapshot()

    def alerts(self) -> list[dict[str, object]]:
        return self.inner.alerts()

    def alerts_oracle(self) -> AlertFeed | None:
        return self.inner.alerts_oracle()

    def probe_oracle(self, probe: ProbeConfig) -> AlertFeed | None:
        return self.inner.probe_oracle(probe)

    def check(self, sha: str) -> SyncState:
        return self.inner.check(sha)
