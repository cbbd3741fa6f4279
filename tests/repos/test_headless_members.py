"""Services over several workloads that are not polluted selectors, through the real
``gitmedic detect`` (issue 22: bitnami/redis, kube-state-metrics, TeaStore).

A headless Service over the members of one app (the StatefulSets it governs, the
shards of one exporter) addresses each pod by name and balances nothing: an info,
exit 0. Two API versions of one Deployment in two variant files are one object: no
"selects pods of 2 workloads". Given a cluster IP, the governed StatefulSets with
different images are a mix: critical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.manifests.helpers import write
from tests.repos.conftest import gitmedic

pytestmark = pytest.mark.integration

HEADLESS = """apiVersion: v1
kind: Service
metadata: {name: %(name)s}
spec:
  clusterIP: None
  selector: {app.kubernetes.io/name: %(app)s}
  ports: [{name: tcp, port: 6379, targetPort: 6379}]
"""
STATEFUL = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: redis-%(role)s}
spec:
  replicas: 2
  serviceName: redis-headless
  selector:
    matchLabels: {app.kubernetes.io/name: redis, app.kubernetes.io/component: %(role)s}
  template:
    metadata:
      labels: {app.kubernetes.io/name: redis, app.kubernetes.io/component: %(role)s}
    spec:
      containers:
        - {name: redis, image: %(image)s, ports: [{containerPort: 6379}]}
"""
SHARD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: ksm-%(n)s}
spec:
  replicas: 2
  selector:
    matchLabels: {app.kubernetes.io/name: ksm, shard: "%(n)s"}
  template:
    metadata:
      labels: {app.kubernetes.io/name: ksm, shard: "%(n)s"}
    spec:
      containers:
        - name: ksm
          image: registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.20.0
          ports: [{containerPort: 6379}]
"""
DEPLOYMENT = """apiVersion: %(api)s
kind: Deployment
metadata: {name: auth}
spec:
  replicas: 2
  selector:
    matchLabels: {run: auth}
  template:
    metadata:
      labels: {run: auth}
    spec:
      containers:
        - name: auth
          image: descartesresearch/teastore-auth:%(tag)s
          ports: [{containerPort: 8080}]
"""
SERVICE = """apiVersion: v1
kind: Service
metadata: {name: auth}
spec:
  selector: {run: auth}
  ports: [{port: 8080, targetPort: 8080}]
"""


def polluted(folder: Path) -> tuple[int, list[dict[str, Any]]]:
    run = gitmedic("detect", folder, "--namespace", "apps", "--format", "json")
    assert run.json()["errors"] == [], run.out
    found = [f for f in run.json()["findings"] if f["detector"] == "service-selector-polluted"]
    return run.rc, found


def test_a_headless_service_governing_two_statefulsets_is_an_info(tmp_path: Path) -> None:
    files = {
        "redis/headless.yaml": HEADLESS % {"name": "redis-headless", "app": "redis"},
        "redis/master.yaml": STATEFUL % {"role": "master", "image": "bitnami/redis:7.4"},
        "redis/replicas.yaml": STATEFUL % {"role": "replicas", "image": "bitnami/redis:7.2"},
    }
    rc, found = polluted(write(tmp_path, files) / "redis")
    assert [(f["resource"]["name"], f["severity"]) for f in found] == [("redis-headless", "info")]
    assert "behind a headless Service" in found[0]["summary"]
    assert rc == 0
    # with a cluster IP, requests mix two images: critical
    service = (tmp_path / "redis/headless.yaml").read_text().replace("  clusterIP: None\n", "")
    (tmp_path / "redis/headless.yaml").write_text(service)
    rc, found = polluted(tmp_path / "redis")
    assert [(f["resource"]["name"], f["severity"]) for f in found] == [
        ("redis-headless", "critical")
    ]
    assert rc == 1


def test_shards_of_one_exporter_behind_a_headless_service_are_an_info(tmp_path: Path) -> None:
    files = {
        "ksm/service.yaml": HEADLESS % {"name": "ksm", "app": "ksm"},
        "ksm/shard-0.yaml": SHARD % {"n": "0"},
        "ksm/shard-1.yaml": SHARD % {"n": "1"},
    }
    rc, found = polluted(write(tmp_path, files) / "ksm")
    assert [(f["resource"]["name"], f["severity"]) for f in found] == [("ksm", "info")]
    assert rc == 0


def test_two_api_versions_of_one_deployment_are_one_workload(tmp_path: Path) -> None:
    files = {
        "auth/service.yaml": SERVICE,
        "auth/auth.yaml": DEPLOYMENT % {"api": "apps/v1", "tag": "1.4"},
        "auth/auth_v16.yaml": DEPLOYMENT % {"api": "extensions/v1beta1", "tag": "1.3"},
    }
    _, found = polluted(write(tmp_path, files) / "auth")
    assert found == []
