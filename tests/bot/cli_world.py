"""The real ``gitmedic`` command in a subprocess, over a real app in a git repo (local forge, sim).

For the end-to-end promises: ``run`` and ``prs`` as a user types them, and a
``serve`` process that webhooks reach over 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from gitmedic.sim.faults.git import commit_all
from tests.bot.payloads import pr_comment
from tests.bot.run_world import app_repo, with_fault
from tests.bot.test_serve_lock import wait_until
from tests.cli.conftest import Result
from tests.support.github_standin import free_port

SECRET = "whsec-cli-world-5a8f"
BOUTIQUE = "online-boutique"
SERVICE = "productcatalogservice"
NEVER = "policy: {auto_merge: never, rules: []}\n"  # what a cautious team writes


Done = Result  # a finished command: rc, out, err, json()


def gitmedic(*argv: str | Path, env: dict[str, str] | None = None, timeout: float = 600) -> Done:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return Done(proc.returncode, proc.stdout, proc.stderr)


def configured_repo(tmp: Path, policy: str, *, name: str = BOUTIQUE) -> tuple[Path, str, str]:
    """The app with a ``.gitmedic/config.yaml`` holding ``policy``, committed."""
    repo, app, namespace = app_repo(tmp, name)
    config = repo / ".gitmedic" / "config.yaml"
    config.parent.mkdir()
    config.write_text(
        f"version: 1\napps:\n  - name: {name}\n    path: {app}\n    namespace: {namespace}\n"
        f"    engine: {{kind: sim}}\n{policy}"
    )
    commit_all(repo, "gitmedic: configuration")
    return repo, app, namespace


def target_port_fault(repo: Path, app: str, namespace: str) -> str:
    return with_fault(repo, app, namespace, "service-target-port", target=SERVICE)


def run_once(repo: Path) -> Done:
    return gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")


def run_app(repo: Path, app: str, namespace: str) -> Done:
    """``run --once --json`` of one app of ``repo`` (no config file) on the sim and local forge."""
    argv = ("--path", app, "--namespace", namespace, "--cluster", "sim", "--forge", "local")
    return gitmedic("run", repo, *argv, "--once", "--json")


def prs(repo: Path) -> list[dict[str, Any]]:
    done = gitmedic("prs", repo, "--json")
    assert done.rc == 0, done.err
    found: list[dict[str, Any]] = done.json()["prs"]
    return found


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return proc.stdout.strip()


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]

    def comment(self, pr: int, user: str, body: str, comment_id: int) -> httpx.Response:
        """A signed ``issue_comment`` webhook, as GitHub delivers it."""
        payload = pr_comment(pr, user, body, comment_id)
        return self.post("issue_comment", payload, f"cli-world-{comment_id}")

    def post(self, event: str, payload: Any, delivery: str) -> httpx.Response:
        """A signed webhook of ``event``, as GitHub delivers it."""
        from gitmedic.bot.service.webhook.signature import sign

        raw = json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(SECRET, raw),
        }
        return httpx.post(f"{self.url}/webhooks/github", content=raw, headers=headers)


@contextmanager
def serving(
    repo: Path, *, interval: float = 2.0, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """``gitmedic serve`` on the local forge of ``repo``, sharing ``run``'s journal."""
    state = repo / ".git" / "gitmedic"
    argv = ["--forge", "local", "--repo", str(repo), "--state-dir", str(state)]
    argv += ["--interval", str(interval), "--log-level", "warning"]
    with serve_process(argv, env=env) as served:
        yield served


@contextmanager
def serve_process(
    argv: list[str], *, env: dict[str, str] | None = None, log: list[str] | None = None
) -> Iterator[Served]:
    """``gitmedic serve --cluster sim ARGV`` on a free port, ready; its output lines are in
    ``log`` once it stopped."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gitmedic", "serve", "--cluster", "sim", "--port", str(port), *argv],
        env={**os.environ, "GITMEDIC_WEBHOOK_SECRET": SECRET, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    served = Served(f"http://127.0.0.1:{port}", process)
    try:
        assert until(lambda: _ready(served.url), 120), "serve never became ready"
        yield served
    finally:
        process.terminate()
        output = process.communicate(timeout=60)[0]
        if log is not None:
            log.extend(output.splitlines())


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def until(condition: Callable[[], bool], timeout: float) -> bool:
    """Wall-clock polling of another process (integration tests only)."""
    return wait_until(condition, timeout)
