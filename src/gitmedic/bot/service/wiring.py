"""``gitmedic serve`` assembled: forge, clone, loop, live actions, monitor thread, service.

The monitor is the loop of ``gitmedic run`` in a thread of the same process: each
tick (under the shared lock) fetches the clone, evaluates when the interval is
due, advances every transaction until it must wait (with the loop's runner, the
only one: it checks the app's writer lease before each step), answers incidents
and acts on what people asked for: :class:`~gitmedic.bot.service.live_actions.LiveActions`
only records intents (a retry, a merge, a revert's plan, a watch of a person's
merge), and the tick carries them out. Between ticks the thread
waits (system time, a :class:`threading.Event` wait so shutdown is prompt) the
interval, or less when a transaction's deadline comes first (a sync poll, the
verification window's next measurement), so the window's measurements are on
time. With ``--cluster sim`` each tick ends by running the sim until the next
tick is due (the sim's time passes only when its clock is slept on), so an
incident outlives its debounce and a transaction runs its course by monitor
ticks alone; while one is in flight the next tick follows at once. Comment
commands and the monitor share one :class:`~gitmedic.bot.service.lock.SharedLock`:
a tick never waits, so the monitor holds it for one tick, and a command queued
during a tick runs right after it, before the next one
(:class:`~gitmedic.bot.service.lock.QueuedFirst`); inside a tick every persisted
step is an event whose handler yields the lock to a queued command, so a
``/gitmedic hold`` is answered at the next step boundary and the merge step,
which reads the hold, sees it. A command never steps a transaction: it is
answered at once, even during another transaction's verification window, and
what it asked for is done by the next tick. :meth:`MonitorThread.stop` finishes the current
tick before returning.

With ``--cluster kube`` every app reads the cluster through one watch cache
(:mod:`gitmedic.reconciler.live_cache`, a list and a watch per kind, started before
the first step and stopped after the last), not a list of every kind per app per step.

With ``--repos FILE`` (:mod:`gitmedic.bot.service.repos`) the process serves every app
of every repository the file lists: each repository is wired as the one repository
is without it (its apps, its lock, its actions and dashboard, its state folder:
:mod:`gitmedic.bot.service.worlds`), the one monitor thread steps every repository
once a tick, each under its own lock, in an order that rotates
(:mod:`gitmedic.bot.service.fair`), and webhooks act on the repository their payload
names (:mod:`gitmedic.bot.service.webhook.routes`). Shard Leases and metrics name apps
``repo/app``.

With ``--forge github`` the repo is gitmedic's clone under the state directory
(:mod:`gitmedic.bot.forges.github_env`), fetched before every use: the monitor's step,
every command, and the changed-files look-up of a merge.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.report import Event
from gitmedic.bot.controller.start_line import start_line
from gitmedic.bot.controller.transact import share_dashboard
from gitmedic.bot.service.apps import AppsActions, app_state_dir
from gitmedic.bot.service.dashboard_desk import DashboardDesk
from gitmedic.bot.service.fair import Rotation, fair_tick
from gitmedic.bot.service.health import DEFAULT_STALL_INTERVALS, Heartbeat
from gitmedic.bot.service.live_actions import LiveActions
from gitmedic.bot.service.lock import QueuedFirst, SharedLock
from gitmedic.bot.service.monitor_metrics import MonitorMetrics
from gitmedic.bot.service.notify import Notifier
from gitmedic.bot.service.repos import load_repos, repos_file
from gitmedic.bot.service.settings import (
    ServeSettings,
    build_routed_service,
    build_service,
    git_changed_files,
    watched_paths,
)
from gitmedic.bot.service.shards import Shards, shard_settings
from gitmedic.bot.service.webhook.handlers import ChangedFiles, Deps
from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.bot.service.webhook.service import Service
from gitmedic.bot.service.worlds import RepoWorld, check_one_journal, forge_and_repo, worlds_of
from gitmedic.bot.service.worlds import (  # what tests hand to wire, where it always was
    github_and_clone as github_and_clone,
)
from gitmedic.reconciler.forge import Forge
from gitmedic.sim.engine import ManifestLoadError

if TYPE_CHECKING:
    from gitmedic.bot.service.webhook.deliveries import SeenElsewhere
    from gitmedic.reconciler.live_cache import LiveCache

log = logging.getLogger(__name__)


class MonitorThread:
    def __init__(
        self,
        step: Callable[[], None],
        interval_s: float,
        lock: AbstractContextManager[None],
        heartbeat: Heartbeat | None = None,
        pause: Callable[[], float] | None = None,
    ) -> None:
        self.step, self.interval_s, self.lock = step, interval_s, lock
        self.heartbeat = heartbeat or Heartbeat(interval_s)
        # How long until the next tick is due: the interval, or sooner when a transaction's
        # deadline (a sync poll, the window's next measurement) comes first.
        self.pause = pause or (lambda: interval_s)
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

    def step_once(self) -> bool:
        """One tick under the shared lock; a failure is logged, never raised (False)."""
        ok = False
        try:
            with self.lock:
                self.step()
        except Exception:  # one failed step is logged; the next interval tries again
            log.exception("monitor step failed")
        else:
            self.heartbeat.passed()  # a failed step is no progress (service.health)
            ok = True
        self.steps += 1
        return ok

    def wait_s(self, ok: bool = True) -> float:
        """The wait before the next tick: never longer than the interval, the whole
        interval after a failed tick (its deadlines may be what failed)."""
        if not ok:
            return self.interval_s
        return min(self.interval_s, max(0.0, self.pause()))

    def _run(self) -> None:
        while not self._stop.is_set():
            ok = self.step_once()
            self._stop.wait(self.wait_s(ok))


@dataclass
class Served:
    service: Service
    monitor: MonitorThread
    actions: LiveActions | AppsActions  # the first repository's; LiveActions for one app
    repo: Path
    loops: list[Loop]  # every repository's
    configs: list[LoopConfig] = field(default_factory=list)  # every app's, deployable or not
    broken: dict[str, str] = field(default_factory=dict)  # app -> why it cannot be deployed
    shards: Shards | None = None  # --shard-leases: the apps this replica holds a Lease of
    cache: LiveCache | None = None  # --cluster kube: the cluster's watch cache, all apps'
    repos: list[_Repo] = field(default_factory=list)  # serve --repos: each repository's

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
    from gitmedic.bot.controller.start_line import check_cluster_for_forge, start_line_repos
    from gitmedic.bot.discover.adopted import adopted_note

    kind = args.forge or env.get("GITMEDIC_FORGE", "local")
    # a real forge is never judged by the sim: checked before anything is cloned or built
    given = args.cluster or env.get("GITMEDIC_CLUSTER")
    args.cluster = check_cluster_for_forge(kind, given)
    listed = repos_file(args, env)
    if listed is not None:
        entries = load_repos(listed, kind)  # every problem, before anything is cloned
        worlds = worlds_of(settings, args, env, kind, entries)
        served = wire_repos(settings, args, env, worlds)
        for world in worlds:
            if note := adopted_note(world.repo):
                log.info("%s: %s", world.name, note)
        named = [(r.name, r.forge, r.repo, r.loops, r.configs, r.broken) for r in served.repos]
        line = start_line_repos(kind, args.cluster, named, env)
        log.info(f"{line}; {served.shards.describe()}" if served.shards else line)
        return served
    forge, repo, fetch = forge_and_repo(settings, args, env)
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
    return wire_repos(settings, args, env, [RepoWorld(forge, repo, fetch)])


def wire_repos(
    settings: ServeSettings,
    args: argparse.Namespace,
    env: Mapping[str, str],
    worlds: list[RepoWorld],
) -> Served:
    """Every app of every repository in one process: one monitor, one watch cache."""
    from gitmedic.bot.controller.assemble import loop_configs_of, watch_cache

    interval = float(args.interval or env.get("GITMEDIC_INTERVAL", "60"))
    cluster = args.cluster or env.get("GITMEDIC_CLUSTER", "sim")
    if cluster == "kube":  # charts render for the cluster's version from the first
        from gitmedic.bot.controller.kube_cluster import record_version_early

        record_version_early(env)
    each = [loop_configs_of(w.repo, w.args or args, interval_s=interval) for w in worlds]
    check_one_journal(worlds, each, env)
    cache = watch_cache(cluster, env, [c for configs in each for c in configs], interval)
    try:
        return _wire(settings, args, env, worlds, each, interval, cluster, cache)
    except BaseException:
        if cache is not None:
            cache.stop()
        raise


def _wire(
    settings: ServeSettings,
    args: argparse.Namespace,
    env: Mapping[str, str],
    worlds: list[RepoWorld],
    each: list[list[LoopConfig]],
    interval: float,
    cluster: str,
    cache: LiveCache | None,
) -> Served:
    metrics = Metrics()
    heartbeat = _heartbeat(interval, env)
    notifier = _notifier(env)
    shared = _Shared(cluster, metrics, heartbeat, notifier, cache)
    repos = [
        _wire_repo(settings, world, configs, shared)
        for world, configs in zip(worlds, each, strict=True)
    ]
    stepping: list[str] = []  # the app the monitor steps now (its shard name)
    loops = {r.shard(a.loop.config.app): a.loop for r in repos for a in r.apps}
    shards = _shards(args, env, loops, stepping)

    def held() -> list[_App]:
        return [a for r in repos for a in r.held(shards)]

    def pause() -> float:
        """Until the earliest app's next due time on the wall; with the sim, whose time ran
        in the tick, none while a transaction is in flight (as fast as the sim computes)."""
        ticking = held()
        if not ticking:
            return interval
        if cluster == "sim":
            return 0.0 if any(a.loop.in_flight() for a in ticking) else interval
        return min(a.loop.next_due() for a in ticking) - ticking[0].loop.clock.now()

    seen = _seen_by_replicas(env)
    if len(repos) == 1 and not repos[0].name:  # serve's one repository, as before --repos
        (one,) = repos
        service = build_service(
            settings,
            one.forge,
            one.actions,
            one.changed,
            repo=one.repo,
            metrics=metrics,
            dashboard=one.desk,
            seen=seen,
        )
        monitor = MonitorThread(
            lambda: one.step(interval, stepping, shards),
            interval,
            QueuedFirst(one.lock),
            heartbeat,
            pause,
        )
    else:
        named = [(r.name, r.deps()) for r in repos]
        service = build_routed_service(settings, named, metrics, seen)
        rotation = Rotation(repos)

        def step() -> None:  # each repository under its own lock: its commands go between
            fair_tick(rotation, lambda r: r.locked_step(interval, stepping, shards), _name)

        monitor = MonitorThread(step, interval, nullcontext(), heartbeat, pause)
    service.liveness = heartbeat.stalled
    first = repos[0]
    configs = [c for r in repos for c in r.configs]
    broken = {r.shard(app): why for r in repos for app, why in r.broken.items()}
    every = list(loops.values())
    return Served(
        service, monitor, first.actions, first.repo, every, configs, broken, shards, cache, repos
    )


@dataclass(frozen=True)
class _Shared:
    """What every repository's apps share in one process."""

    cluster: str
    metrics: Metrics
    heartbeat: Heartbeat
    notifier: Notifier | None
    cache: LiveCache | None


@dataclass
class _Repo:
    """One repository's apps, their actions and dashboards, under its own lock."""

    name: str  # "": serve's one repository (its apps' names are unique as they are)
    forge: Forge
    repo: Path
    lock: SharedLock
    apps: list[_App]
    configs: list[LoopConfig]  # every app's, deployable or not
    broken: dict[str, str]
    actions: LiveActions | AppsActions
    changed: ChangedFiles
    desk: DashboardDesk

    @property
    def loops(self) -> list[Loop]:
        return [a.loop for a in self.apps]

    def shard(self, app: str) -> str:
        """The app's name among every repository's (its shard Lease, its metrics)."""
        return f"{self.name}/{app}" if self.name else app

    def held(self, shards: Shards | None) -> list[_App]:
        return [
            a for a in self.apps if shards is None or shards.holds(self.shard(a.loop.config.app))
        ]

    def step(self, interval: float, stepping: list[str], shards: Shards | None) -> None:
        for app in self.held(shards):
            stepping[:] = [self.shard(app.loop.config.app)]
            try:
                app.step(interval)
            finally:
                stepping.clear()
        # Commands record transactions (a revert's plan, a watch) the loops step next: the
        # dashboard's boxes follow them (no forge call when nothing changed). Once per
        # monitor tick: the issue renders every app's journal, so once per app was
        # O(apps^2) journal reads a tick (1,000,000 with 1,000 apps).
        self.apps[0].loop.txns.refresh_dashboard()

    def locked_step(self, interval: float, stepping: list[str], shards: Shards | None) -> None:
        with QueuedFirst(self.lock):
            self.step(interval, stepping, shards)

    def deps(self) -> Deps:
        watched = watched_paths(self.repo, ())
        return Deps(self.forge, self.actions, self.changed, watched, dashboard=self.desk)


def _name(repo: _Repo) -> str:
    return repo.name


def _wire_repo(
    settings: ServeSettings, world: RepoWorld, configs: list[LoopConfig], shared: _Shared
) -> _Repo:
    lock = SharedLock(world.fetch)
    state_dir = world.state_dir or settings.state_dir
    states = [app_state_dir(state_dir, c.app, len(configs)) for c in configs]
    apps, wired, broken = [], [], {}
    label = (lambda app: f"{world.name}/{app}") if world.name else (lambda app: app)
    common = (shared.metrics, shared.heartbeat, shared.notifier, shared.cache)
    for config, state in zip(configs, states, strict=True):
        if config.undivided:  # served, judging only its own objects (run says the same)
            log.error("%s: %s", label(config.app), config.undivided)
        try:
            args = (config, shared.cluster, world.forge, state, lock, *common, label(config.app))
            apps.append(_wire_app(*args))
        except ManifestLoadError as exc:  # said, and the other apps served (as run does)
            broken[config.app] = str(exc)
            log.error("%s: cannot deploy it: %s", label(config.app), exc)
            continue
        wired.append(config)
    if not apps:
        where = f"{world.name}: " if world.name else ""
        raise ValueError(f"{where}no app can be deployed: {'; '.join(broken.values())}")
    changed = _fetched(world.fetch, git_changed_files(world.repo))
    each = [app.actions for app in apps]
    actions = each[0] if len(each) == 1 else AppsActions(each, [c.path for c in wired], changed)
    share_dashboard([a.loop.txns for a in apps])  # one issue, a section per app
    desk = DashboardDesk([(a.loop.txns.view, a.loop.txns.dashboard) for a in apps], lock)
    return _Repo(
        world.name, world.forge, world.repo, lock, apps, configs, broken, actions, changed, desk
    )


def _shards(
    args: argparse.Namespace,
    env: Mapping[str, str],
    loops: dict[str, Loop],
    stepping: list[str],
) -> Shards | None:
    """With --shard-leases: the coordinator (first round done), and each loop's writer
    lease backed by its app's Kubernetes Lease. ``loops`` by shard name (``repo/app``
    with --repos: unique among every repository's apps)."""
    from gitmedic.reconciler.leases.app_lease import ShardLease
    from gitmedic.reconciler.transaction.lease import this_process

    settings = shard_settings(args, env)
    if settings is None:
        return None

    def busy(app: str) -> bool:  # not handed over mid-step or mid-transaction
        return app in stepping or bool(loops[app].txns.unsettled())

    shards = Shards.of(settings, list(loops), this_process(), busy)
    for name, loop in loops.items():
        app, ttl = loop.config.app, loop.config.lock_ttl_s
        loop.lease = ShardLease.of(shards.coordinator, loop.journal, app, ttl, shard=name)
    return shards


@dataclass
class _App:
    loop: Loop
    actions: LiveActions
    recorder: MonitorMetrics
    elapse: Callable[[float], None]  # the sim's time passes: it runs when slept on

    def step(self, interval: float) -> None:
        try:
            self.loop.step()  # intents too; the dashboard follows once all apps ticked (wire)
            self.recorder.after_step(self.loop)
        finally:  # the sim's time runs until the next tick is due, even after a failed step
            due = self.loop.next_due() - self.loop.clock.now()
            self.elapse(min(interval, max(0.0, due)))


def _heartbeat(interval: float, env: Mapping[str, str]) -> Heartbeat:
    raw = env.get("GITMEDIC_HEALTH_STALL_INTERVALS", str(DEFAULT_STALL_INTERVALS))
    try:
        return Heartbeat(interval, float(raw))
    except ValueError as exc:
        raise ValueError(f"GITMEDIC_HEALTH_STALL_INTERVALS={raw!r}: {exc}") from None


def _notifier(env: Mapping[str, str]) -> Notifier | None:
    url = env.get("GITMEDIC_NOTIFY_URL", "")
    return Notifier(url) if url else None


def _seen_by_replicas(env: Mapping[str, str]) -> SeenElsewhere | None:
    """With a journal the replicas share, a delivery is accepted once among them all
    (:mod:`gitmedic.bot.service.webhook.deliveries`); alone, its own file says it."""
    from gitmedic.bot.controller.journal_url import shared_journal
    from gitmedic.bot.service.webhook.deliveries import REPLAY_WINDOW_S

    journal = shared_journal(env)
    if journal is None:
        return None

    def first(keys: Sequence[str], now: float) -> bool:
        return journal.first_seen(keys, now, forget_before=now - REPLAY_WINDOW_S)

    return first


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
    label: str = "",  # its name among every repository's apps (serve --repos: repo/app)
) -> _App:
    from gitmedic.bot.controller.assemble import build_loop

    recorded: list[MonitorMetrics] = []  # set once the loop's journal exists

    def on_event(event: Event) -> None:
        heartbeat.beat()  # each persisted step of a transaction is progress
        for recorder in recorded:
            recorder.on_event(event)
        log.info(
            "%s: %s: %s",
            label or config.app,
            event.kind,
            event.text,
            extra={"event": event.kind, "pr": event.data.get("pr"), "app": label or config.app},
        )
        lock.yield_to_waiters()  # every event is reported between two steps

    loop = build_loop(config, cluster, forge, state, quiet=True, on_event=on_event, cache=cache)
    # The commands only record intents: the loop's tick (its one runner) acts on them.
    actions = LiveActions(
        forge, loop.journal, loop.ports, loop.clock, app=config.app, mu_now=loop.mu_now, lock=lock
    )
    recorded.append(MonitorMetrics(metrics, loop.journal, label or config.app, notifier=notifier))
    return _App(loop, actions, recorded[0], _elapse(loop, cluster, lock, heartbeat))


def _elapse(
    loop: Loop, cluster: str, lock: SharedLock, heartbeat: Heartbeat
) -> Callable[[float], None]:
    """How the time between two ticks passes on the loop's clock. The sim's time passes
    only when its clock is slept on (sleeping runs the simulated cluster, which commands
    read): queued commands go first, then the sim runs for it. A real cluster's time
    passes by itself while the monitor thread waits: nothing to run."""
    if cluster != "sim":
        return lambda seconds: None

    def elapse(seconds: float) -> None:
        lock.yield_to_waiters()
        loop.clock.sleep(seconds)
        heartbeat.beat()  # the sim ran: progress (serve's liveness)

    return elapse


def _fetched(fetch: Callable[[], object], changed: ChangedFiles) -> ChangedFiles:
    def files(sha: str) -> tuple[str, ...]:
        fetch()
        return changed(sha)

    return files
