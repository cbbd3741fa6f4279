"""Flux's postBuild variables through the real ``gitmedic detect``: a finding on a
substituted field names the value Flux applies, at the line of the ``${...}`` the team
wrote; a variable whose source gitmedic cannot read is said, never judged as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import gitmedic

pytestmark = pytest.mark.integration

KUSTOMIZATION = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: web
  namespace: flux-system
spec:
  path: ./app
  sourceRef: {{kind: GitRepository, name: flux-system}}
  postBuild:
    substitute: {{replicas: "2"}}
    substituteFrom:
      - {{kind: {kind}, name: cluster-vars}}
"""
VARS = """apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-vars, namespace: flux-system}
data: {settings: web-settings}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          resources:
            requests: {cpu: 10m, memory: 64Mi}
            limits: {memory: 128Mi}
      volumes:
        - name: settings
          configMap:
            name: ${settings}
"""
VOLUME_LINE = DEPLOYMENT.splitlines().index("          configMap:") + 1


def repo_with(tmp_path: Path, kind: str) -> Path:
    repo = write(
        init_repo(tmp_path / "repo"),
        {
            "clusters/prod/web.yaml": KUSTOMIZATION.format(kind=kind),
            "clusters/prod/vars.yaml": VARS,
            "app/deployment.yaml": DEPLOYMENT,
        },
    )
    commit_all(repo, "a Flux cluster with variables")
    return repo


def test_a_finding_names_the_substituted_value_at_the_line_written(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "ConfigMap")
    run = gitmedic("detect", ".", "--format", "json", cwd=repo)
    assert run.rc == 1, run.out + run.err
    report = run.json()
    assert report["errors"] == []
    (missing,) = [f for f in report["findings"] if f["rule"] == "configmap-missing"]
    assert "ConfigMap web-settings is absent" in missing["summary"], missing
    assert (missing["file"], missing["line"]) == ("app/deployment.yaml", VOLUME_LINE)
    invalid = [f for f in report["findings"] if f["detector"] == "schema-invalid"]
    assert [f["resource"]["kind"] for f in invalid] == ["Kustomization"], "replicas: 2, an int"


def test_a_secret_kept_outside_the_repository_is_said_and_no_literal_is_judged(
    tmp_path: Path,
) -> None:
    repo = repo_with(tmp_path, "Secret")
    run = gitmedic("detect", ".", "--format", "json", cwd=repo)
    assert "Traceback" not in run.err, run.err
    report = run.json()
    assert "${settings}" not in str(report["findings"]), "no finding on a literal ${settings}"
    messages = [f"{e['file']}:{e['line']}: {e['message']}" for e in report["errors"]]
    assert any(
        m.startswith("clusters/prod/web.yaml:1: Flux Kustomization flux-system/web ")
        and "${settings} in app/deployment.yaml from Secret flux-system/cluster-vars" in m
        for m in messages
    ), messages
    assert any("none of its objects is judged" in m for m in messages), messages
