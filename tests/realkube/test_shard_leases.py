"""Replicas of ``gitmedic serve --shard-leases`` divide the apps with real Leases.

Only etcd and kube-apiserver are started (module-scoped): Leases need nothing
else, and the whole tier's controllers, Flux and Argo CD would cost minutes of
two shared cores. The bot's identity is the chart's, with ``shards.enabled``: the
ServiceAccount's token and exactly the RBAC the chart renders, so the Lease Role
is proven sufficient. Three real ``serve`` processes (sim cluster, local forge,
their own state directories) divide six apps two each; the one SIGKILLed has
its apps taken by the others once its Leases expire (the lease duration after
its last renewal, plus a round); one stopped cleanly hands its apps over at
once. That a replica *acts* only on its apps is read from each app's journal: a
step renews the writer row, and only for an app whose Lease the replica holds.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.bot.test_run_every_app import WEB, repo_of
from tests.realkube.bot_identity import install_bot
from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import ControlPlane, start_api_server
from tests.realkube.processes import Processes, free_port, stop_recorded
from tests.realkube.tools import find_tools

pytestmark = REALKUBE

APPS = [f"app-{i}" for i in range(6)]
LEASE_S = 6  # rounds every 1.2 s, renewals every 2 s, a holder gives up after 4 s
ROUND_S = LEASE_S / 5
SECRET = "whsec-shards-3f1c"


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    tools = find_tools()
    if isinstance(tools, str):
        pytest.skip(f"realkube tier skipped: {tools}")
    folder = tmp_path_factory.mktemp("lease-plane")
    try:
        yield start_api_server(tools, folder, Processes(folder))
    finally:
        stop_recorded(folder)


class Replicas:
    def __init__(self, plane: ControlPlane, namespace: str, folder: Path) -> None:
        self.plane, self.namespace, self.folder = plane, namespace, folder
        self.procs = Processes(folder / "replicas")
        self.kubeconfig = install_bot(
            plane, namespace, folder, read_secrets=False, extra=("shards.enabled=true",)
        )
        self.repo = repo_of(
            folder, APPS, lambda d, n: (d / "web.yaml").write_text(WEB.format(ns=n, minor=0))
        )
        self.pids: dict[str, int] = {}

    def start(self, name: str) -> None:
        argv = [
            sys.executable,
            "-m",
            "gitmedic",
            "serve",
            "--forge",
            "local",
            "--cluster",
            "sim",
            "--repo",
            str(self.repo),
            "--state-dir",
            str(self.folder / name),
            "--port",
            str(free_port()),
            "--interval",
            "1",
            "--log-level",
            "info",
            "--shard-leases",
            self.namespace,
            "--shard-lease-seconds",
            str(LEASE_S),
        ]
        env = {"KUBECONFIG": str(self.kubeconfig), "GITMEDIC_WEBHOOK_SECRET": SECRET}
        self.pids[name] = self.procs.start(name, argv, env).pid

    def holders(self) -> dict[str, str]:
        """app -> the replica holding its Lease ('' for none, '?' for an unknown holder)."""
        leases = self.plane.get_json("leases", "-n", self.namespace)["items"]
        by_pid = {str(pid): name for name, pid in self.pids.items()}
        found = {}
        for lease in leases:
            app = (lease["metadata"].get("annotations") or {}).get("gitmedic.dev/app")
            holder = lease["spec"].get("holderIdentity") or ""
            if app:
                found[app] = by_pid.get(holder.split(":")[1], "?") if holder else ""
        return found

    def acting_on(self, name: str, within_s: float = 5.0) -> set[str]:
        """The apps whose journal this replica's steps renewed their writer row in lately
        (a monitor step renews it; every second here)."""
        acting = set()
        for app in APPS:
            journal = self.folder / name / "apps" / app / "journal.sqlite"
            if not journal.exists():
                continue
            with sqlite3.connect(journal) as db:
                rows = db.execute("SELECT holder, acquired FROM locks").fetchall()
            if any(at >= time.time() - within_s for _, at in rows):
                acting.add(app)
        return acting

    def log(self, name: str) -> str:
        return self.procs.log(name).read_text(errors="replace")


def until(condition: Callable[[], bool], timeout_s: float) -> float:
    """Seconds until ``condition`` held (polled), or a failure after ``timeout_s``."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout_s, f"not within {timeout_s} s"
        time.sleep(0.2)
    return time.monotonic() - began


def acts_on_its_own(replicas: Replicas, name: str, held: dict[str, str]) -> None:
    """Until the apps it steps are exactly those whose Lease it holds."""
    mine = {app for app, holder in held.items() if holder == name}
    until(lambda: replicas.acting_on(name) == mine, 30)


def shares(holders: dict[str, str]) -> Counter[str]:
    return Counter(holders.values())


def test_three_replicas_divide_six_apps_and_take_a_killed_ones_over(
    plane: ControlPlane, tmp_path: Path
) -> None:
    namespace = f"t-{os.getpid()}"
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    replicas = Replicas(plane, namespace, tmp_path)
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
        plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
