"""Benchmark: recomputing the simulated cluster for train-ticket (64 Deployments).

One recomputation = ``Cluster.observe()`` at a new moment: every controller,
pod, Endpoints/EndpointSlice and Event object rebuilt from the applied state.
The cluster is settled first (600 simulated seconds), then timed at 200 further
moments (one clock step each, so no cache hit). Prints the median and p95 in ms
and exits 1 if the median is over the 50 ms target.

    .venv/bin/python bench/sim_recompute.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.clock import FakeClock
from gitmedic.sim.cluster import Cluster

APP = Path(__file__).parents[1] / "tests/fixtures/data/apps/train-ticket"
PATH = APP / "deployment/kubernetes-manifests/quickstart-k8s"
TARGET_MS = 50.0
RUNS = 200


def main() -> int:
    snapshot = load_desired(PATH, namespace="train-ticket").snapshot
    clock = FakeClock()
    cluster = Cluster(clock, ImageCatalog.from_snapshots([snapshot]))
    cluster.apply(snapshot)
    clock.advance(600)
    cluster.observe()
    times = []
    for _ in range(RUNS):
        clock.advance(1)
        start = time.perf_counter()
        observed = cluster.observe()
        times.append((time.perf_counter() - start) * 1000)
    deployments = sum(1 for o in observed.objects if o["kind"] == "Deployment")
    median = statistics.median(times)
    p95 = sorted(times)[int(RUNS * 0.95)]
    print(f"train-ticket: {deployments} Deployments, {len(observed.objects)} objects")
    print(
        f"recompute median {median:.1f} ms, p95 {p95:.1f} ms over {RUNS} runs "
        f"(target < {TARGET_MS:.0f} ms)"
    )
    return 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
