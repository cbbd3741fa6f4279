"""``gitmedic serve --forge local --cluster sim`` in a subprocess, on 127.0.0.1, for attacks.

The service runs as users run it: the real CLI, uvicorn, its protocol and limits,
configured through the environment. The monitor's interval is an hour, so only
webhooks act. :func:`post` signs a delivery as GitHub does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from gitmedic.bot.service.webhook.signature import sign
from tests.support.github_standin import free_port

SECRET = "whsec-security-suite-5c1e"


@dataclass(frozen=True)
class Served:
    proc: subprocess.Popen[bytes]
    url: str
    port: int
    log: Path

    def rss_kib(self) -> int:
        """The server's resident memory now, from /proc."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS in /proc status")

    def post(self, event: str, payload: Any, delivery: str) -> httpx.Response:
        body = json.dumps(payload).encode()
        return self.post_raw(event, body, delivery)

    def post_raw(self, event: str, body: bytes, delivery: str) -> httpx.Response:
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(SECRET, body),
        }
        return httpx.post(f"{self.url}/webhooks/github", content=body, headers=headers, timeout=30)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


@contextmanager
def serve(
    repo: Path, state: Path, env: Mapping[str, str] | None = None, interval: float = 3600
) -> Iterator[Served]:
    port = free_port()
    log = state.parent / f"serve-{port}.log"
    argv = [sys.executable, "-m", "gitmedic.bot.cli.main", "serve", "--forge", "local",
            "--cluster", "sim", "--repo", str(repo), "--state-dir", str(state),
            "--port", str(port), "--interval", str(interval), "--log-level", "warning"]  # fmt: skip
    full_env = {**os.environ, "GITMEDIC_WEBHOOK_SECRET": SECRET, **(env or {})}
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    served = Served(proc, f"http://127.0.0.1:{port}", port, log)
    try:
        _wait_ready(served)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _wait_ready(served: Served) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if served.proc.poll() is not None:
            raise AssertionError(f"serve exited: {served.log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{served.url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"serve did not become ready: {served.log.read_text()[-3000:]}")
