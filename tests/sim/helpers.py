"""Building sims over the real apps for the tests."""

from __future__ import annotations

from functools import cache

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.clock import FakeClock
from gitmedic.sim.engine import StaticSource
from gitmedic.sim.runtime import Sim
from tests.conftest import App, real_apps

# Healthy at baseline in the sim (every pod Ready, app Healthy, entry points answer).
HEALTHY = (
    "astronomy-shop-otel-demo",
    "hotel-reservation",
    "online-boutique",
    "sock-shop",
    "teastore",
    "train-ticket",
)
# Not healthy at baseline, and why (each a real defect of the upstream YAML):
UNHEALTHY = {
    # 14 Deployments mount ConfigMaps the YAML does not declare (jaeger-config-yaml, ...)
    "social-network": "FailedMount",
    # mongodb-geo and mongodb-rate mount init-script ConfigMaps built by scripts
    "hotel-reservation-sregym": "FailedMount",
}


def app(name: str) -> App:
    return next(a for a in real_apps() if a.name == name)


@cache
def desired(name: str) -> Snapshot:
    a = app(name)
    return load_desired(a.path, namespace=a.namespace).snapshot


def sim_for(snapshot: Snapshot, baseline: Snapshot | None = None, *, seed: int = 0) -> Sim:
    catalog = ImageCatalog.from_snapshots([baseline if baseline is not None else snapshot])
    return Sim(StaticSource(snapshot, "rev-1"), catalog, FakeClock(), seed=seed)
