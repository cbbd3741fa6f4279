"""The whole sim in one object: cluster, GitOps engine, traffic, alerts, runtime faults.

``run(seconds)`` advances the injected clock in fixed steps (``step_s``); each
step lets the engine reconcile once and re-evaluates the alert conditions, so
alerts fire after their ``for`` durations exactly as a Prometheus evaluating
every ``step_s`` would. ``state()`` is what the oracles read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitmedic.reconciler.clock import Clock, FakeClock
from gitmedic.sim.alerts import AlertRules, AlertTracker, conditions, latency_baseline
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.cluster import Cluster, Observed
from gitmedic.sim.engine import Engine, EngineConfig, RevisionSource
from gitmedic.sim.stamps import EPOCH
from gitmedic.sim.traffic import Perturbation, Traffic, measure

STEP_S = 5.0


@dataclass(frozen=True)
class SimState:
    observed: Observed
    traffic: Traffic
    alerts: list[dict[str, Any]]
    application: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "objects": list(self.observed.objects),
            "entrypoints": self.traffic.to_json(),
            "alerts": self.alerts,
            "application": self.application,
        }


@dataclass
class Sim:
    source: RevisionSource
    catalog: ImageCatalog
    clock: Clock = field(default_factory=lambda: FakeClock(EPOCH))
    seed: int = 0
    rules: AlertRules = field(default_factory=AlertRules)
    engine_config: EngineConfig = field(default_factory=EngineConfig)
    name: str = "app"
    namespace: str = "default"
    perturbations: list[Perturbation] = field(default_factory=list)
    tracker: AlertTracker = field(default_factory=AlertTracker)
    # each entry point's latency when first seen answering well: what "slow" is against
    latency_baseline: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._traffic: tuple[Observed, tuple[Perturbation, ...], Traffic] | None = None
        self.cluster = Cluster(self.clock, self.catalog, seed=self.seed)
        self.engine = Engine(
            self.source,
            self.cluster,
            self.clock,
            name=self.name,
            namespace=self.namespace,
            config=self.engine_config,
        )

    def run(self, seconds: float, step_s: float = STEP_S) -> SimState:
        """Advance simulated time (the clock must be a FakeClock) and evaluate every step."""
        if not isinstance(self.clock, FakeClock):
            raise TypeError("Sim.run needs a FakeClock; with a real clock call tick() instead")
        self.tick()
        remaining = seconds
        while remaining > 0:
            self.clock.advance(min(step_s, remaining))
            remaining -= step_s
            self.tick()
        return self.state()

    def tick(self) -> None:
        self.engine.step()
        traffic = self.traffic()
        self.latency_baseline = latency_baseline(self.latency_baseline, traffic)
        found = conditions(self.cluster.observe(), traffic, self.rules, self.latency_baseline)
        self.tracker = self.tracker.observe(self.clock.now(), found)

    def traffic(self) -> Traffic:
        # a pure function of the observed state and the perturbations: measured once per
        # moment although both the alert evaluation and state() read it
        observed, faults = self.cluster.observe(), tuple(self.perturbations)
        cached = self._traffic
        if cached is None or cached[0] is not observed or cached[1] != faults:
            cached = (observed, faults, measure(observed, self.cluster.catalog, faults, self.seed))
            self._traffic = cached
        return cached[2]

    def state(self) -> SimState:
        now = self.clock.now()
        return SimState(
            self.cluster.observe(),
            self.traffic(),
            self.tracker.firing(now),
            self.engine.application(),
        )

    # -- runtime (B-class) faults: no Git change -----------------------------------

    def perturb(self, perturbation: Perturbation) -> None:
        self.perturbations.append(perturbation)

    def clear_perturbations(self) -> None:
        self.perturbations.clear()
