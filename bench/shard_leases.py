"""Benchmark: what dividing many apps with Leases costs the API server and the replica.

``--replicas`` coordinators share ``--apps`` apps over the in-memory Lease API of the
tests (the API server's version rule, no network), on a simulated clock in rounds of
``retry_s``. Reported: rounds until every app is held exactly once and the shares
differ by one at most; Lease writes per second at the steady state (renewals: one
per held app per renewal interval, plus each replica's slot); one replica's CPU per
round (``time.process_time``, list + bookkeeping + writes into memory); and, after
one replica stops renewing, the simulated seconds until the others hold its apps.

    PYTHONPATH=src:. .venv/bin/python bench/shard_leases.py [--apps 1000] [--replicas 3]
"""

from __future__ import annotations

import argparse
import sys
import time

from tests.leases.fake_leases import Clock, FakeLeases

from gitmedic.reconciler.leases.elector import Timing
from gitmedic.reconciler.leases.shards import ShardCoordinator


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--lease-seconds", type=int, default=15)
    args = parser.parse_args()
    api, clock, timing = FakeLeases(), Clock(), Timing.of(args.lease_seconds)
    apps = [f"app-{i:04}" for i in range(args.apps)]
    replicas = [
        ShardCoordinator(api, apps, f"host:{i}:r", timing=timing, clock=clock)
        for i in range(args.replicas)
    ]
    cpu: list[float] = []

    def round_of(alive: list[ShardCoordinator]) -> None:
        for replica in alive:
            began = time.process_time()
            replica.tick()
            cpu.append(time.process_time() - began)
        clock.advance(timing.retry_s)

    def shares(alive: list[ShardCoordinator]) -> list[int]:
        return [sum(1 for a in apps if r.holds(a)) for r in alive]

    rounds = 0
    while sum(shares(replicas)) != len(apps) or max(shares(replicas)) - min(shares(replicas)) > 1:
        round_of(replicas)
        rounds += 1
    print(f"divided in {rounds} rounds ({rounds * timing.retry_s:.0f} s): {shares(replicas)}")
    cpu.clear()
    writes, start = api.writes, clock.now
    for _ in range(50):
        round_of(replicas)
    rate = (api.writes - writes) / (clock.now - start)
    print(f"steady state: {rate:.1f} Lease writes/s in all, {rate / len(replicas):.1f} each")
    cpu.sort()
    print(
        f"CPU per round of one replica: median {cpu[len(cpu) // 2] * 1000:.1f} ms, "
        f"max {cpu[-1] * 1000:.1f} ms"
    )
    survivors, dead = replicas[:-1], replicas[-1]
    orphans = [a for a in apps if dead.holds(a)]
    died = clock.now
    while not all(any(r.holds(a) for r in survivors) for a in orphans):
        round_of(survivors)
    print(
        f"{len(orphans)} apps of a dead replica held again {clock.now - died:.1f} s after "
        f"its last round (lease {timing.duration_s} s, rounds of {timing.retry_s} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
