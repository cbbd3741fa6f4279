"""Replicas of ``gitmedic serve --shard-leases`` divide the apps with real Leases.

Only etcd and kube-apiserver are started (``lease_plane``). The bot's identity
is the chart's, with ``shards.enabled``: the ServiceAccount's token and exactly
the RBAC the chart renders, so the Lease Role is proven sufficient. Three real
``serve`` processes (sim cluster, local forge, their own state directories)
divide six apps two each; the one SIGKILLed has its apps taken by the others
once its Leases expire (the lease duration after its last renewal, plus a
round); one stopped cleanly hands its apps over at once. That a replica *acts*
only on its apps is read from the steps it marks (``tests/support/step_marks``, a
test hook): a step is marked for an app only when the replica holds its writer lease,
and only an app whose Lease it holds.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import ControlPlane
from tests.realkube.processes import stop_recorded
from tests.realkube.shard_replicas import Replicas, shares, until
from tests.support.step_marks import stepped_within

pytestmark = REALKUBE

APPS = [f"app-{i}" for i in range(6)]
LEASE_S = 6  # rounds every 1.2 s, renewals every 2 s, a holder gives up after 4 s
ROUND_S = LEASE_S / 5


def acting_on(replicas: Replicas, name: str, within_s: float = 5.0) -> set[str]:
    """The apps this replica acted on lately: a step it holds an app's writer lease in
    is marked (tests/support/step_marks; every second here)."""
    return {app for app in APPS if stepped_within(replicas.marks(name), app, within_s)}


def acts_on_its_own(replicas: Replicas, name: str, held: dict[str, str]) -> None:
    """Until the apps it steps are exactly those whose Lease it holds."""
    mine = {app for app, holder in held.items() if holder == name}
    until(lambda: acting_on(replicas, name) == mine, 30)


def test_three_replicas_divide_six_apps_and_take_a_killed_ones_over(
    lease_plane: ControlPlane, tmp_path: Path
) -> None:
    namespace = f"t-{os.getpid()}"
    lease_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    replicas = Replicas(lease_plane, namespace, tmp_path, APPS, lease_s=LEASE_S)
    try:
        for name in ("a", "b", "c"):
            replicas.start(name)

        def divided() -> bool:
            held = replicas.holders()
            return set(held) == set(APPS) and shares(held) == {"a": 2, "b": 2, "c": 2}

        until(divided, 180)
        held = replicas.holders()
        for name in ("a", "b", "c"):
            acts_on_its_own(replicas, name, held)
        assert f"shards: Leases in namespace {namespace}" in replicas.log("a")

        orphans = {app for app, holder in held.items() if holder == "a"}
        os.kill(replicas.pids["a"], signal.SIGKILL)

        def taken_over() -> bool:
            now = replicas.holders()
            return all(now[app] in ("b", "c") for app in orphans) and shares(now) == {
                "b": 3,
                "c": 3,
            }

        took = until(taken_over, 60)
        print(f"shards: the killed replica's apps taken over in {took:.1f} s (lease {LEASE_S} s)")
        assert took <= LEASE_S + 2 * ROUND_S + 2, f"{took:.1f} s"
        for name in ("b", "c"):
            acts_on_its_own(replicas, name, replicas.holders())

        os.kill(replicas.pids["b"], signal.SIGTERM)  # a clean stop releases its Leases
        began = time.monotonic()
        assert replicas.procs.started[1][1].wait(timeout=60) == 0, replicas.log("b")[-2000:]
        handed = until(lambda: shares(replicas.holders()) == {"c": 6}, 60)
        print(f"shards: a cleanly stopped replica's apps handed over in {handed:.1f} s")
        assert time.monotonic() - began < LEASE_S + 30  # the stop itself may take a while
        assert handed < LEASE_S, "released, not left to expire"
    finally:
        stop_recorded(replicas.procs.folder)
        lease_plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
