"""Two apps in one live namespace: ``gitmedic run --cluster kube`` for one of them does not
see the other's objects (the live loader lists the whole namespace; kmock stands in).

The shop shares namespace ``shop`` with a ``batch`` app whose worker crash-loops. The
shop's loop leaves out what the batch app renders, what that owns (its ReplicaSet and
pod) and the Events about them, so the shop is healthy; the batch app's own view
still has the crash loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from gitmedic.bot.cli.main import main
from gitmedic.bot.controller.siblings import sibling_keys, without_siblings
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.live import connect, read_live
from gitmedic.reconciler.manifests.config_file import load_config
from gitmedic.reconciler.manifests.shared_namespace import neighbours
from tests.live.kmock_thread import KmockThread, kmock_server
from tests.sync.conftest import velero
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

ARGO = "http://argocd.test"
CONFIG = f"""version: 1
apps:
  - name: shop
    path: {APP}
    namespace: {NAMESPACE}
    engine: {{kind: argocd, application: shop, url: {ARGO}, token_env: SHOP_ARGO_TOKEN}}
  - name: batch
    path: apps/batch
    namespace: {NAMESPACE}
"""
WORKER = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: batch-worker
  namespace: {NAMESPACE}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: batch-worker}}
  template:
    metadata:
      labels: {{app: batch-worker}}
    spec:
      containers:
        - name: worker
          image: ghcr.io/example/batch-worker:1.0.0
          resources:
            requests: {{cpu: 10m, memory: 32Mi}}
            limits: {{memory: 64Mi}}
"""


def _owned(kind: str, name: str, owner_kind: str, owner: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": NAMESPACE,
        "uid": f"uid-{name}",
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind,
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
            }
        ],
    }


def _crashing_worker() -> list[dict[str, Any]]:
    """The batch worker live: its Deployment, ReplicaSet, a crash-looping pod, the Event."""
    waiting = {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting"}
    last = {"terminated": {"reason": "Error", "exitCode": 1}}
    status = {
        "name": "worker",
        "ready": False,
        "restartCount": 7,
        "state": {"waiting": waiting},
        "lastState": last,
        "image": "ghcr.io/example/batch-worker:1.0.0",
    }
    meta = {"name": "batch-worker", "namespace": NAMESPACE, "uid": "uid-batch-worker"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "batch-worker"}},
            "template": {
                "metadata": {"labels": {"app": "batch-worker"}},
                "spec": {
                    "containers": [
                        {"name": "worker", "image": "ghcr.io/example/batch-worker:1.0.0"}
                    ]
                },
            },
        },
        "status": {"replicas": 1, "unavailableReplicas": 1},
    }
    rs_meta = _owned("ReplicaSet", "batch-worker-7d4", "Deployment", "batch-worker")
    replicaset = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": rs_meta,
        "spec": deployment["spec"],
        "status": {"replicas": 1},
    }
    pod_meta = _owned("Pod", "batch-worker-7d4-x2", "ReplicaSet", "batch-worker-7d4")
    pod_meta["labels"] = {"app": "batch-worker"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": deployment["spec"]["template"]["spec"],
        "status": {"phase": "Running", "containerStatuses": [status]},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "batch-worker-7d4-x2.1", "namespace": NAMESPACE},
        "involvedObject": {"kind": "Pod", "name": "batch-worker-7d4-x2", "namespace": NAMESPACE},
        "reason": "BackOff",
        "message": "Back-off restarting failed container",
        "type": "Warning",
        "count": 12,
    }
    return [deployment, replicaset, pod, event]


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, KmockThread]]:
    """The shop and a batch app in one namespace, and kmock with the batch worker crashing."""
    repo = baseline_repo(tmp_path)
    (repo / "apps" / "batch").mkdir()
    (repo / "apps" / "batch" / "worker.yaml").write_text(WORKER)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "batch: a worker in the shop's namespace")
    with kmock_server() as server:
        server.add(_crashing_worker())
        monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path)))
        monkeypatch.setenv("SHOP_ARGO_TOKEN", "argo-t0ken")
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield repo, server


@pytest.mark.integration
@respx.mock
def test_the_shop_s_loop_does_not_see_the_batch_app_s_crash_loop(
    shared: tuple[Path, KmockThread], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = shared
    respx.get(f"{ARGO}/api/v1/applications/shop").mock(
        return_value=httpx.Response(200, json=velero())
    )
    argv = ["run", str(repo), "--path", APP, "--cluster", "kube", "--forge", "local"]
    # settled over several evaluations: a finding opens an incident once it persists
    assert main([*argv, "--once", "--json", "--interval", "1", "--settle", "6"]) == 0
    assert json.loads(capsys.readouterr().out) == {"healthy": True, "incidents": []}


@pytest.mark.integration
def test_the_batch_app_s_view_keeps_its_own_crash_loop(shared: tuple[Path, KmockThread]) -> None:
    """The same namespace read as each app reads it: the crash loop is the batch app's."""
    repo, _ = shared
    config = load_config(repo / ".gitmedic" / "config.yaml")
    shop, batch = config.apps
    snapshot, _ = read_live(connect(), namespace=NAMESPACE)
    seen = {}
    for app in (shop, batch):
        view = without_siblings(snapshot, sibling_keys(neighbours(repo, config, app).rendered))
        found = run_detectors(list(builtin_registry()), view).findings
        seen[app.name] = {(f.detector, f.resource.name) for f in found}
    assert ("pod-crashloop", "batch-worker") in seen["batch"]
    assert not {name for _, name in seen["shop"]} & {"batch-worker", "batch-worker-7d4-x2"}
    assert sibling_keys(neighbours(repo, config, batch).rendered) >= {("Deployment", "catalog")}
