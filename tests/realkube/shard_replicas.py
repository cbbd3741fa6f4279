"""Replicas of ``gitmedic serve --shard-leases``: the shard tests' world.

On a bare API server (``lease_plane`` of :mod:`tests.realkube.conftest`), with
the bot's identity the chart's with ``shards.enabled``: the ServiceAccount's
token and exactly the RBAC the chart renders. Every replica serves the same
repository on the local forge (its PRs live in the repository's ``.git``, so all
replicas see the same ones) and the sim (each replica's sim deploys that
repository's ``main``), each with its own state directory; ``env`` adds what
every replica gets (a shared journal's URL, say).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tests.bot.test_run_every_app import WEB, repo_of
from tests.realkube.bot_identity import install_bot
from tests.realkube.control_plane import ControlPlane
from tests.realkube.processes import Processes, free_port
from tests.support.step_marks import marking_env

SECRET = "whsec-shards-3f1c"


class Replicas:
    def __init__(
        self,
        plane: ControlPlane,
        namespace: str,
        folder: Path,
        apps: Sequence[str],
        *,
        lease_s: int,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.plane, self.namespace, self.folder = plane, namespace, folder
        self.apps, self.lease_s, self.env = list(apps), lease_s, dict(env or {})
        self.procs = Processes(folder / "replicas")
        self.kubeconfig = install_bot(
            plane, namespace, folder, read_secrets=False, extra=("shards.enabled=true",)
        )
        self.repo = repo_of(
            folder, self.apps, lambda d, n: (d / "web.yaml").write_text(WEB.format(ns=n, minor=0))
        )
        self.pids: dict[str, int] = {}
        self.ports: dict[str, int] = {}  # each replica's webhook port

    def start(self, name: str, env: Mapping[str, str] | None = None) -> None:
        self.ports[name] = free_port()
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
            str(self.ports[name]),
            "--interval",
            "1",
            "--log-level",
            "info",
            "--shard-leases",
            self.namespace,
            "--shard-lease-seconds",
            str(self.lease_s),
        ]
        env = {
            "KUBECONFIG": str(self.kubeconfig),
            "GITMEDIC_WEBHOOK_SECRET": SECRET,
            **marking_env(self.marks(name)),  # which apps it steps (test hook)
            **self.env,
            **(env or {}),
        }
        self.pids[name] = self.procs.start(name, argv, env).pid

    def marks(self, name: str) -> Path:
        """Where replica ``name`` marks each step it acts on an app in (its apps)."""
        return self.folder / name / "steps"

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

    def log(self, name: str) -> str:
        return self.procs.log(name).read_text(errors="replace")

    def alive(self, condition: Callable[[], bool], *, but: str = "") -> Callable[[], bool]:
        """``condition``, failing at once (with its log) if a replica other than ``but``
        exited meanwhile: a wait for what a dead replica would have done is no wait."""

        def checked() -> bool:
            for name, process in self.procs.started:
                if name != but and process.poll() is not None:
                    raise AssertionError(
                        f"replica {name} exited ({process.returncode}):\n{self.procs.tail(name)}"
                    )
            return condition()

        return checked


def until(condition: Callable[[], bool], timeout_s: float) -> float:
    """Seconds until ``condition`` held (polled), or a failure after ``timeout_s``."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout_s, f"not within {timeout_s} s"
        time.sleep(0.2)
    return time.monotonic() - began


def shares(holders: dict[str, str]) -> Counter[str]:
    return Counter(holders.values())
