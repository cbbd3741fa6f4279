"""A Flux repository's cluster folders, through the real ``gitmedic detect`` (issue 22:
fluxcd/flux2-multi-tenancy read its two clusters as one app, three objects "defined twice").

``flux bootstrap --path clusters/<name>`` writes ``clusters/<name>/flux-system/gotk-*.yaml``
and syncs that folder from the cluster: each cluster folder is one cluster's desired
state, never applied with another's. And a Flux Kustomization whose source is an OCI
artifact (``path: ./`` of kyverno's manifests) deploys no folder of this repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import gitmedic

pytestmark = pytest.mark.integration

PLACEHOLDER = "# This file will be generated automatically by flux boostrap.\n"
BOOTSTRAP = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - gotk-components.yaml
  - gotk-sync.yaml
"""
CLUSTER_INFRASTRUCTURE = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: kyverno
  namespace: flux-system
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./infrastructure/kyverno
  prune: true
"""
KYVERNO = {
    "infrastructure/kyverno/kustomization.yaml": "resources: [source.yaml, sync.yaml]\n",
    "infrastructure/kyverno/source.yaml": """apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: kyverno-controller, namespace: flux-system}
spec:
  interval: 6h
  url: oci://ghcr.io/kyverno/manifests/kyverno
  ref: {semver: 1.x}
""",
    "infrastructure/kyverno/sync.yaml": """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: kyverno-controller, namespace: flux-system}
spec:
  interval: 12h
  sourceRef: {kind: OCIRepository, name: kyverno-controller}
  path: ./
  prune: true
""",
}
SERVICE = """apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 8080}]
"""


def bootstrapped(cluster: str) -> dict[str, str]:
    return {
        f"clusters/{cluster}/flux-system/gotk-components.yaml": PLACEHOLDER,
        f"clusters/{cluster}/flux-system/gotk-sync.yaml": PLACEHOLDER,
        f"clusters/{cluster}/flux-system/kustomization.yaml": BOOTSTRAP,
    }


def detect(tmp_path: Path, files: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    repo = init_repo(tmp_path / "repo")
    write(repo, files)
    commit_all(repo)
    run = gitmedic("detect", ".", "--namespace", "flux-system", "--format", "json", cwd=repo)
    assert run.json()["errors"] == [], run.out
    return run.rc, run.json()["findings"]


def judged(findings: list[dict[str, Any]]) -> list[str]:
    return [f"{f['detector']} {f['resource']['name']}" for f in findings if f["severity"] != "info"]


def test_two_clusters_declaring_the_same_flux_objects_are_not_variants(tmp_path: Path) -> None:
    files = {**bootstrapped("staging"), **bootstrapped("production"), **KYVERNO}
    files["clusters/staging/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    files["clusters/production/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    rc, findings = detect(tmp_path, files)
    assert judged(findings) == []
    assert rc == 0


def test_a_kustomization_of_an_oci_artifact_deploys_no_folder_of_the_repository(
    tmp_path: Path,
) -> None:
    # no bootstrap files: the cluster folders are told apart by what they declare, as
    # long as the OCI Kustomization's `path: ./` is not read as this repository's root
    files = {**KYVERNO}
    files["clusters/staging/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    files["clusters/production/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    rc, findings = detect(tmp_path, files)
    assert judged(findings) == []
    assert rc == 0


def test_a_git_repository_of_another_branch_deploys_no_folder_of_this_checkout(
    tmp_path: Path,
) -> None:
    tenant = """apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: dev-team, namespace: apps}
spec:
  url: https://github.com/example/fleet
  ref: {branch: dev-team}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: dev-team, namespace: apps}
spec:
  sourceRef: {kind: GitRepository, name: dev-team}
  path: ./
"""
    files = {"tenants/dev-team.yaml": tenant}
    files["clusters/staging/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    files["clusters/production/infrastructure.yaml"] = CLUSTER_INFRASTRUCTURE
    rc, findings = detect(tmp_path, files)
    assert judged(findings) == []
    assert rc == 0


def test_each_bootstrapped_cluster_is_evaluated_on_its_own(tmp_path: Path) -> None:
    # staging's Service has no Deployment in staging: production's does not serve it
    files = {**bootstrapped("staging"), **bootstrapped("production")}
    files["clusters/staging/service.yaml"] = SERVICE
    files["clusters/production/deployment.yaml"] = DEPLOYMENT
    _, findings = detect(tmp_path, files)
    assert "service-selector-unmatched web" in judged(findings)
    files["clusters/staging/deployment.yaml"] = DEPLOYMENT
    rc, findings = detect(tmp_path / "again", files)
    assert judged(findings) == []
    assert rc == 0
