"""The sim as the loop's cluster and GitOps engine (``gitmedic run --cluster sim``, the demo).

The engine tracks ``main`` of the manifest repo (a :class:`GitSource`), so a merge
on the local forge is what gets deployed, after the engine's sync delay. Time is
the sim's fake clock; :class:`SimDrivenClock` makes every wait of the loop (an
evaluation interval, a sync poll, an oracle window) advance the sim by that
much, so minutes of simulated operation take seconds of wall time.

The sync watcher is the sim's :class:`SimWatcher`: the reconciler's Argo rule
applied to the sim's Application object, as against a real Argo CD. The alerts
are the sim's Prometheus-style rules in Alertmanager's shape, read in-process by
the verification window's alerts oracle (the same reading as a real
Alertmanager's answer).

The sim lives in the process: a restarted ``gitmedic run --cluster sim`` starts a
new one deploying main. What its images can run is learned from the revisions
known to have run healthy (``known_good``: a configured baseline, or those the
bot verified, :mod:`gitmedic.bot.controller.known_good`), never from the commits since;
without any, from the history before a revision
(:func:`~gitmedic.sim.history.baseline_catalog`): after a restart the one where
the interrupted incident began, not main, whose history now holds the fault and
the bot's own candidates, so the restarted sim knows what the one before it
knew and a candidate that crash-looped still does. Which images exist is wider:
every image the repo's history names up to those revisions, in any folder, and
what later commits name outside the app (:mod:`gitmedic.sim.registry`), the same
registry ``gitmedic sim status`` pulls from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gitmedic.bot.controller.sim_probes import SimProbeOracle, service_of
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.config import ProbeConfig
from gitmedic.reconciler.oracles import AlertListOracle
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.engine import GitSource
from gitmedic.sim.history import baseline_catalog, healthy_catalog
from gitmedic.sim.rollout import ready_in
from gitmedic.sim.runtime import STEP_S, Sim
from gitmedic.sim.stamps import EPOCH
from gitmedic.sim.watcher import SimWatcher


class SimWorld:
    """The simulated time the apps of one ``run`` share, and the sims it runs.

    With several apps, one process watches them side by side on one clock, as one
    cluster holds them all: time slept on by any app's loop runs every app's sim, so
    one app's fix and the others' settling overlap as they would on a cluster, and the
    run's simulated duration is honest (apps watched one after the other would add
    up). A sim joins at its own warm-up, which moves the shared clock without the
    others' sims, settled by then, being stepped through it.
    """

    def __init__(self) -> None:
        self.clock = FakeClock(EPOCH)
        self.sims: list[Sim] = []

    def run(self, seconds: float, step_s: float = STEP_S) -> None:
        """Every sim, step by step (as :meth:`Sim.run` steps one)."""
        for sim in self.sims:
            sim.tick()
        remaining = seconds
        while remaining > 0:
            self.clock.advance(min(step_s, remaining))
            remaining -= step_s
            for sim in self.sims:
                sim.tick()


class SimDrivenClock:
    """The reconciler's Clock over the sims' time: sleeping runs the sims."""

    def __init__(self, world: SimWorld) -> None:
        self.world = world

    def now(self) -> float:
        return self.world.clock.now()

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot sleep a negative time ({seconds})")
        if seconds > 0:
            self.world.run(seconds)


class SimCluster:
    """One app of a git repo deployed by the sim; read-only for the loop."""

    engine_name = "the simulator"

    def __init__(
        self,
        repo: Path,
        path: str,
        namespace: str,
        *,
        seed: int = 0,
        allow_images: Iterable[str] = (),
        baseline_rev: str | None = None,
        warm_up_s: float = 120.0,
        history_rev: str | None = None,  # learn from the history before this (default: rev)
        known_good: Sequence[str] = (),  # revisions that ran healthy: learn from these only
        deployer: str = "",  # the app is this release at ``path`` (AppConfig.deployer)
        world: SimWorld | None = None,  # the clock shared with other apps' sims (SimWorld)
    ) -> None:
        where = repo / path if path else repo
        self.namespace = namespace
        source = GitSource(where, namespace, deployer=deployer)
        if known_good:
            catalog = healthy_catalog(
                where, known_good, namespace=namespace, allow=allow_images, deployer=deployer
            )
        else:
            catalog = _history_catalog(source, baseline_rev, history_rev, allow_images)
        world = world or SimWorld()
        clock = world.clock
        self.sim = Sim(source, catalog, clock, seed=seed, name=where.name, namespace=namespace)
        # Start from a settled cluster (pods started, the slow starters too), as a bot
        # joining a running one does.
        self.sim.run(warm_up_s)
        rest = ready_in(self.sim.cluster.histories.values(), clock.now())
        if rest > 0:
            self.sim.run(rest + STEP_S)
        world.sims.append(self.sim)
        self.clock = SimDrivenClock(world)

    def snapshot(self) -> Snapshot:
        return self.sim.cluster.observe().snapshot

    def alerts(self) -> list[dict[str, Any]]:
        return self.sim.tracker.firing(self.clock.now())

    def alerts_oracle(self) -> AlertListOracle:
        return AlertListOracle(
            self.alerts,
            {"namespace": self.namespace},
            described="the simulator's alert rules",
            read_pending=self.pending_alerts,
        )

    def pending_alerts(self) -> list[dict[str, Any]]:
        return self.sim.tracker.pending(self.clock.now())

    def probe_oracle(self, probe: ProbeConfig) -> SimProbeOracle | None:
        """A probe of a cluster name answered by the sim's traffic model (the Service the
        URL names); any other URL (an address, the sim's own HTTP surface) is a real GET."""
        if service_of(probe.url, self.namespace) is None:
            return None
        return SimProbeOracle(self.sim, probe, self.namespace, name=f"probe {probe.url}")

    def check(self, sha: str) -> SyncState:
        return SimWatcher(self.sim).check(sha)


def _history_catalog(
    source: GitSource, baseline_rev: str | None, history_rev: str | None, allow: Iterable[str]
) -> ImageCatalog:
    rev = baseline_rev or source.head()
    return baseline_catalog(
        source.path,
        history_rev or rev,
        namespace=source.namespace,
        current=source.desired(rev),
        allow=list(allow),
        healthy=baseline_rev is not None,  # the caller's word: the cluster ran it well
        deployer=source.deployer,
    )
