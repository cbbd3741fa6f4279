"""The Kubernetes version charts render for, through the real ``gitmedic`` command in a
subprocess: the live cluster's (kmock answering ``/version``), before the config's
``kubernetes_version``; without a cluster the config's, and a chart it does not satisfy
is an error naming that version.

The shop and a ``batch`` chart share namespace ``shop``. The chart needs Kubernetes
1.30 (``kubeVersion: >=1.30.0-0``); the config says 1.26. Live, the chart's worker
crash-loops. The shop's loop leaves out what its neighbour renders
(:mod:`gitmedic.bot.controller.siblings`), so the shop is healthy exactly when the chart
rendered: for the cluster's 1.30. When the cluster does not say its version, the chart
is refused for the config's 1.26 and the shop fails closed: it cannot tell the
neighbour's objects from its own, says so, and judges none of them.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.test_run_kube_siblings import WORKER, _crashing_worker
from tests.live.kmock_thread import KmockThread, kmock_server
from tests.repos.conftest import Run
from tests.sync.conftest import velero
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: batch\nversion: 1.0.0\nkubeVersion: '>=1.30.0-0'\n",
    "templates/worker.yaml": WORKER,
}
CONFIG = f"""version: 1
kubernetes_version: '1.26'
apps:
  - name: shop
    path: {APP}
    namespace: {NAMESPACE}
    engine: {{kind: argocd, application: shop, url: ARGO_URL, token_env: SHOP_ARGO_TOKEN}}
  - name: batch
    path: apps/batch
    namespace: {NAMESPACE}
"""
VERSION_1_30 = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.2",
    "gitCommit": "3968350",
    "gitTreeState": "clean",
    "buildDate": "2024-06-11T20:21:00Z",
    "goVersion": "go1.22.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}


class _Argo(http.server.BaseHTTPRequestHandler):
    """Argo CD's REST API for the one Application: Synced and Healthy."""

    def do_GET(self) -> None:
        found = self.path.split("?")[0] == "/api/v1/applications/shop"
        body = json.dumps(velero() if found else {"error": "not found"}).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def argo() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Argo))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def repo(tmp_path: Path, argo: str) -> Path:
    repo = baseline_repo(tmp_path)
    for name, text in CHART.items():
        path = repo / "apps/batch" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(CONFIG.replace("ARGO_URL", argo))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "batch: a chart for Kubernetes 1.30 in the shop's namespace")
    return repo


@pytest.fixture
def cluster() -> Iterator[KmockThread]:
    with kmock_server() as server:
        server.add(_crashing_worker())
        yield server


def gitmedic(*argv: str | Path, env: dict[str, str] | None = None) -> Run:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def run_shop(repo: Path, server: KmockThread, tmp_path: Path) -> Run:
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env |= {"KUBECONFIG": str(server.kubeconfig(tmp_path)), "SHOP_ARGO_TOKEN": "argo-t0ken"}
    argv: list[str | Path] = ["run", repo, "--app", "shop", "--cluster", "kube", "--forge", "local"]
    # settled over several evaluations: a finding opens an incident once it persists
    return gitmedic(*argv, "--once", "--json", "--interval", "1", "--settle", "6", env=env)


def test_the_chart_renders_for_the_live_cluster_s_version_not_the_config_s(
    repo: Path, cluster: KmockThread, tmp_path: Path
) -> None:
    cluster.call(lambda: cluster.emulator["get /version/"] << VERSION_1_30)
    run = run_shop(repo, cluster, tmp_path)
    assert "Traceback" not in run.err, run.err[-3000:]
    assert run.rc == 0, run.err[-3000:]
    assert run.json() == {"healthy": True, "incidents": []}, "the neighbour's worker is not ours"


def test_a_cluster_that_does_not_say_its_version_leaves_the_config_s(
    repo: Path, cluster: KmockThread, tmp_path: Path
) -> None:
    """The same repository and cluster, whose ``/version`` names no version: the chart is
    rendered for the config's 1.26, which it refuses, so the shop cannot tell the
    neighbour's crash-looping worker from its own: it says so, naming the neighbour and
    the version, opens no incident on the worker, and is not reported healthy."""
    unknown = {**VERSION_1_30, "major": "", "minor": "", "gitVersion": "unknown"}
    cluster.call(lambda: cluster.emulator["get /version/"] << unknown)
    run = run_shop(repo, cluster, tmp_path)
    assert "Traceback" not in run.err, run.err[-3000:]
    assert run.rc == 1, run.err[-3000:]
    report = run.json()
    assert report["healthy"] is False and report["incidents"] == [], report
    assert "batch does not render" in report["error"], report
    assert "v1.26" in report["error"], report


def test_without_a_cluster_the_config_s_version_is_an_error_naming_it(repo: Path) -> None:
    run = gitmedic("detect", repo / "apps/batch", "--format", "json")
    assert run.rc == 2, run.out + run.err
    [error] = run.json()["errors"]
    assert "incompatible with Kubernetes v1.26" in error["message"], error
    asked = gitmedic("detect", repo / "apps/batch", "--kubernetes-version", "1.30")
    assert asked.rc in (0, 1), asked.out + asked.err
