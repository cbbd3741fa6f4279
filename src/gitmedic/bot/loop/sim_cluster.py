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
new one deploying main. What its images can run is learned from the history
before a revision (:func:`~gitmedic.sim.history.baseline_catalog`); after a
restart that revision is where the interrupted incident began
(:func:`incident_history_rev`, the first base of its transactions), not main,
whose history now holds the fault and the bot's own candidates: the restarted
sim knows what the one before it knew, so a candidate that crash-looped still does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import AlertListOracle
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.engine import GitSource
from gitmedic.sim.history import baseline_catalog
from gitmedic.sim.runtime import Sim
from gitmedic.sim.stamps import EPOCH
from gitmedic.sim.watcher import SimWatcher


class SimDrivenClock:
    """The reconciler's Clock over the sim's time: sleeping runs the sim."""

    def __init__(self, sim: Sim, clock: FakeClock) -> None:
        self.sim = sim
        self.clock = clock

    def now(self) -> float:
        return self.clock.now()

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot sleep a negative time ({seconds})")
        if seconds > 0:
            self.sim.run(seconds)


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
    ) -> None:
        where = repo / path if path else repo
        self.namespace = namespace
        source = GitSource(where, namespace)
        rev = baseline_rev or source.head()
        current = source.desired(rev)
        catalog = baseline_catalog(
            where,
            history_rev or rev,
            namespace=namespace,
            current=current,
            allow=list(allow_images),
            healthy=baseline_rev is not None,  # the caller's word: the cluster ran it well
        )
        clock = FakeClock(EPOCH)
        self.sim = Sim(source, catalog, clock, seed=seed, name=where.name, namespace=namespace)
        self.clock = SimDrivenClock(self.sim, clock)
        # Start from a settled cluster (pods started), as a bot joining a running one does.
        self.sim.run(warm_up_s)

    def snapshot(self) -> Snapshot:
        return self.sim.cluster.observe().snapshot

    def alerts(self) -> list[dict[str, Any]]:
        return self.sim.tracker.firing(self.clock.now())

    def alerts_oracle(self) -> AlertListOracle:
        return AlertListOracle(self.alerts, {"namespace": self.namespace},
                               described="the simulator's alert rules",
                               read_pending=self.pending_alerts)  # fmt: skip

    def pending_alerts(self) -> list[dict[str, Any]]:
        return self.sim.tracker.pending(self.clock.now())

    def check(self, sha: str) -> SyncState:
        return SimWatcher(self.sim).check(sha)


def incident_history_rev(journal: Journal, app: str) -> str | None:
    """The first base of the transactions of the app's incidents still live, if any."""
    live = {row.id for row in journal.incidents(app) if row.status in ("open", "escalated")}
    bases = [t.plan.base_sha for t in journal.transactions(app=app) if t.plan.incident in live]
    return bases[0] if bases else None
