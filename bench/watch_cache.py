"""Benchmark: N apps' snapshots per monitor interval, from lists or from the watch cache.

On the real kube-apiserver of the realkube tier (etcd + apiserver only, started here):
``--apps`` namespaces with ``--objects`` ConfigMaps, Services and Secrets each. Each
interval every app takes its snapshot, and one object per app changes (one kubectl
apply) so the watches carry events. Two ways, in turn:

- lists: :func:`gitmedic.reconciler.live.read_live` per app (what every step did before);
- cache: one :func:`gitmedic.reconciler.live_cache.kube_cache` for all, its view per app.

Reported per interval: HTTP requests to the API server (every list page and watch this
process sends, counted at the HTTP call) and this process's CPU (``time.process_time``:
the watch threads' decoding included; kubectl's is not). A watch is restarted every
``WATCH_TIMEOUT_S`` of wall time: in a real interval of ``--interval`` seconds that adds
``kinds x interval / WATCH_TIMEOUT_S`` requests, printed apart since the bench's
intervals are back to back.

    PATH="$(.ci/tools.sh):$PATH" PYTHONPATH=src:. .venv/bin/python bench/watch_cache.py \\
        [--apps 20] [--objects 10] [--intervals 10] [--interval 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.realkube.control_plane import ControlPlane, start_api_server
from tests.realkube.processes import Processes, stop_recorded
from tests.realkube.tools import find_tools

from gitmedic.reconciler import live, live_watch
from gitmedic.reconciler.live_cache import WATCHED, LiveCache
from gitmedic.reconciler.live_watch import KubeTransport

REQUESTS = [0]
NOW, INTERVAL = (
    [0.0],
    [60.0],
)  # the cache's clock (its PodMetrics poll): one interval per measured one


def counted() -> None:
    """Count every list page (live._get) and every watch request (the transport's)."""
    real_get, real_watch = live._get, live_watch.KubeTransport.watch

    def get(*args: Any, **kwargs: Any) -> Any:
        REQUESTS[0] += 1
        return real_get(*args, **kwargs)

    def watch(self: Any, *args: Any, **kwargs: Any) -> Any:
        REQUESTS[0] += 1
        return real_watch(self, *args, **kwargs)

    live._get = get  # type: ignore[assignment]
    live_watch.KubeTransport.watch = watch  # type: ignore[method-assign]


def populate(plane: ControlPlane, apps: list[str], objects: int) -> None:
    docs: list[dict[str, object]] = []
    for ns in apps:
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(objects):
            meta = {"name": f"o-{i}", "namespace": ns}
            docs.append(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"i": "0"}}
            )
            docs.append(
                {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "stringData": {"k": "v"}}
            )
            ports = [{"port": 80 + i}]
            docs.append(
                {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": {"ports": ports}}
            )
    plane.apply(docs)


def churn(plane: ControlPlane, apps: list[str], step: int) -> None:
    plane.apply([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o-0", "namespace": ns},
         "data": {"i": str(step)}}
        for ns in apps
    ])  # fmt: skip


def measure(
    read: Any, plane: ControlPlane, apps: list[str], intervals: int
) -> tuple[list[int], list[float], int]:
    requests, cpu, seen = [], [], 0
    for step in range(intervals):
        NOW[0] += INTERVAL[0]
        churn(plane, apps, step + 1)
        before, began = REQUESTS[0], time.process_time()
        for ns in apps:
            snapshot = read(ns)
            seen += len(snapshot)
        cpu.append(time.process_time() - began)
        requests.append(REQUESTS[0] - before)
    return requests, cpu, seen // intervals


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=20)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--intervals", type=int, default=10)
    parser.add_argument("--interval", type=float, default=60.0)
    args = parser.parse_args()
    tools = find_tools()
    if isinstance(tools, str):
        print(f"no real API server: {tools}", file=sys.stderr)
        return 2
    counted()
    INTERVAL[0] = args.interval
    apps = [f"app-{i:03}" for i in range(args.apps)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            plane = start_api_server(tools, folder, Processes(folder))
            populate(plane, apps, args.objects)
            api = live.connect(kubeconfig=str(plane.kubeconfig))

            def listed(ns: str) -> Any:
                return live.read_live(api, namespace=ns)[0]

            lists = measure(listed, plane, apps, args.intervals)
            start_cpu, start_requests = time.process_time(), REQUESTS[0]
            # kube_cache's, on the bench's clock: an interval passes at each measured one
            streams = len(WATCHED) * (1 + len(apps))
            transport = KubeTransport(
                live.connect(kubeconfig=str(plane.kubeconfig)), streams=streams
            )
            cache = LiveCache(
                transport, apps, poll_s=args.interval / 2, clock=lambda: NOW[0]
            ).start()
            cache.read(apps[0])  # waits for the first lists of every kind
            warm = (time.process_time() - start_cpu, REQUESTS[0] - start_requests)

            def cached(ns: str) -> Any:
                return cache.read(ns)[0]

            phase = time.process_time()
            watched = measure(cached, plane, apps, args.intervals)
            time.sleep(1.0)  # the last events reach the store before the CPU is read
            cache.stop()
            phase = time.process_time() - phase
        finally:
            stop_recorded(folder)
    restarts = len(WATCHED) * args.interval / live_watch.WATCH_TIMEOUT_S
    print(f"{args.apps} apps x {args.objects} x (ConfigMap, Secret, Service), "
          f"{args.intervals} intervals, one change per app per interval")  # fmt: skip
    for name, (requests, cpu, objects) in (("lists", lists), ("cache", watched)):
        print(
            f"{name}: {statistics.median(requests):.0f} requests/interval, "
            f"CPU/interval median {statistics.median(cpu) * 1000:.1f} ms "
            f"(max {max(cpu) * 1000:.1f}), {objects} objects read/interval"
        )
    print(f"cache start: {warm[1]} requests, {warm[0] * 1000:.0f} ms CPU; plus "
          f"{restarts:.1f} watch restarts per {args.interval:.0f} s interval")  # fmt: skip
    print(f"cache: the whole phase's CPU (the watch threads' too) / intervals: "
          f"{phase / args.intervals * 1000:.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
