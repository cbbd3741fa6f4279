"""kmock (an HTTP Kubernetes emulator) served from a background thread on 127.0.0.1.

kmock is asyncio-based; the kubernetes client is synchronous. The emulator runs
its own event loop in a daemon thread, the test talks to it over real HTTP with
the real client, and every change to the emulator's state after start-up goes
through that loop (``call``), so nothing races the server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import kmock
import yaml

T = TypeVar("T")

# kind -> kmock resource key ("group/version/plural", core as "v1/plural").
RESOURCES = {
    "Pod": "v1/pods", "Service": "v1/services", "Endpoints": "v1/endpoints",
    "ConfigMap": "v1/configmaps", "Secret": "v1/secrets", "Event": "v1/events",
    "PersistentVolumeClaim": "v1/persistentvolumeclaims", "Node": "v1/nodes",
    "ServiceAccount": "v1/serviceaccounts", "ResourceQuota": "v1/resourcequotas",
    "LimitRange": "v1/limitranges",
    "Deployment": "apps/v1/deployments", "StatefulSet": "apps/v1/statefulsets",
    "DaemonSet": "apps/v1/daemonsets", "ReplicaSet": "apps/v1/replicasets",
    "Job": "batch/v1/jobs", "CronJob": "batch/v1/cronjobs",
    "HorizontalPodAutoscaler": "autoscaling/v2/horizontalpodautoscalers",
    "NetworkPolicy": "networking.k8s.io/v1/networkpolicies",
    "Ingress": "networking.k8s.io/v1/ingresses",
}  # fmt: skip


class KmockThread:
    def __init__(self, emulator: kmock.KubernetesEmulator, loop: asyncio.AbstractEventLoop):
        self.emulator = emulator
        self.loop = loop
        self.url = ""

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's loop (the only safe place to touch the emulator)."""
        done: Future[T] = Future()

        def run() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return done.result(timeout=10)

    def add(self, objects: Iterable[Mapping[str, Any]]) -> None:
        def put() -> None:
            for obj in objects:
                meta = obj["metadata"]
                key = (RESOURCES[obj["kind"]], meta.get("namespace"), meta["name"])
                self.emulator.objects[key] = dict(obj)

        self.call(put)

    def requests(self) -> list[Any]:
        return self.call(lambda: list(self.emulator))

    def kubeconfig(self, directory: Path, *, context: str = "kmock", token: str = "t0k3n") -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "kmock", "cluster": {"server": self.url}}],
            "users": [{"name": "bot", "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": "kmock", "user": "bot"}}],
        }  # fmt: skip
        path = directory / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path


@contextmanager
def kmock_server(*, all_builtin_resources: bool = True) -> Iterator[KmockThread]:
    """A running emulator; with ``all_builtin_resources`` every built-in kind lists (empty)."""
    ready: Future[KmockThread] = Future()
    stop: Future[None] = Future()

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        stopped = loop.create_future()
        stop.add_done_callback(lambda _: loop.call_soon_threadsafe(stopped.set_result, None))
        async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator) as server:
            if all_builtin_resources:
                for key in RESOURCES.values():
                    emulator.resources[key] = {}
            handle = KmockThread(emulator, loop)
            handle.url = str(server.url).rstrip("/")
            ready.set_result(handle)
            await stopped

    def main() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)

    thread = threading.Thread(target=main, name="kmock", daemon=True)
    thread.start()
    handle = ready.result(timeout=10)
    try:
        yield handle
    finally:
        stop.set_result(None)
        thread.join(timeout=10)
