"""A Flux HelmRelease whose ``valuesFrom`` ConfigMap kustomize generates, through the real
``gitmedic detect`` (issue 22: fluxcd/flux2-monitoring-example's kube-prometheus-stack).

The folder's ``kustomization.yaml`` turns a plain values file into the ConfigMap with a
``configMapGenerator`` (a hashed name that a ``nameReference`` configuration rewrites the
release's reference to, or ``disableNameSuffixHash``); the release renders with that
file's values, and a fault there is found. A ConfigMap neither declared nor generated
stays an error naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import gitmedic

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    "charts/web/values.yaml": "replicas: 3\n",
    "charts/web/templates/deploy.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {{ .Values.replicas }}
  strategy:
    rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
""",
}
RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: web
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/web
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  valuesFrom:
    - kind: ConfigMap
      name: %s
      valuesKey: web-values.yaml
"""
KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: web
resources:
  - release.yaml
configMapGenerator:
  - name: web-values
    files:
      - %s
configurations:
  - kustomizeconfig.yaml
"""
NAME_REFERENCE = """nameReference:
- kind: ConfigMap
  version: v1
  fieldSpecs:
  - path: spec/valuesFrom/name
    kind: HelmRelease
"""
CONFIG = """version: 1
apps:
  - {name: web, deployed_by: {file: apps/web/release.yaml}, namespace: web}
"""
ONE_REPLICA = "# one replica, and the chart lets a rollout stop it\nreplicas: 1\n"


def repo_with(tmp_path: Path, reference: str, files_entry: str, extra: str = "") -> Path:
    repo = init_repo(tmp_path / "repo")
    write(repo, CHART)
    write(
        repo,
        {
            ".gitmedic/config.yaml": CONFIG,
            "apps/web/release.yaml": RELEASE % reference,
            "apps/web/kustomization.yaml": KUSTOMIZATION % files_entry + extra,
            "apps/web/kustomizeconfig.yaml": NAME_REFERENCE,
            "apps/web/config/web-values.yaml": ONE_REPLICA,
        },
    )
    commit_all(repo)
    return repo


def rules(repo: Path) -> tuple[int, list[str], list[str]]:
    run = gitmedic("detect", ".", "--format", "json", cwd=repo)
    report = run.json()
    found = [
        f"{f['detector']} {f['resource']['kind']}/{f['resource']['name']}"
        for f in report["findings"]
    ]
    return run.rc, found, [e["message"] for e in report["errors"]]


def refused(repo: Path) -> str:
    """The config names the release: one it cannot read makes the config invalid (stderr)."""
    run = gitmedic("detect", ".", "--format", "json", cwd=repo)
    assert (run.rc, run.out) == (2, ""), run.out
    return run.err


@pytest.mark.parametrize(
    ("reference", "extra"),
    [
        ("web-values", ""),  # the name kustomize's nameReference rewrites to the hashed one
        ("web-values-5g7fhm2hb8", ""),  # the hashed name, written out
        ("web-values", "generatorOptions: {disableNameSuffixHash: true}\n"),
    ],
    ids=["name-reference", "hashed-name", "no-hash-suffix"],
)
def test_the_generated_configmap_s_file_gives_the_release_its_values(
    tmp_path: Path, reference: str, extra: str
) -> None:
    repo = repo_with(tmp_path, reference, "config/web-values.yaml", extra)
    rc, found, errors = rules(repo)
    assert errors == []
    # replicas 1 comes from the generated ConfigMap's file (the chart's default is 3)
    assert "rollout-strategy-unsafe Deployment/web" in found
    assert rc == 1


def test_a_key_named_in_the_generator_is_the_values_key(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "web-values", "web-values.yaml=config/web-values.yaml")
    (repo / "apps/web/config/web-values.yaml").rename(repo / "apps/web/config/other.yaml")
    kustomization = repo / "apps/web/kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("=config/web-values", "=config/other")
    )
    commit_all(repo)
    rc, found, errors = rules(repo)
    assert errors == [] and "rollout-strategy-unsafe Deployment/web" in found
    assert rc == 1


def test_a_configmap_neither_declared_nor_generated_is_an_error_naming_it(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "other-values", "config/web-values.yaml")
    err = refused(repo)
    assert "apps/web/release.yaml: HelmRelease web: valuesFrom ConfigMap other-values" in err
    assert "is not declared in apps/web/" in err


def test_a_generated_key_held_in_a_literal_is_refused_with_the_reason(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "web-values", "config/web-values.yaml")
    text = (repo / "apps/web/kustomization.yaml").read_text()
    literal = "    literals:\n      - 'web-values.yaml=replicas: 1'\n"
    (repo / "apps/web/kustomization.yaml").write_text(
        text.replace("    files:\n      - config/web-values.yaml\n", literal)
    )
    commit_all(repo)
    err = refused(repo)
    assert "ConfigMap web-values is generated with web-values.yaml as a literal" in err
    assert "generate it from a file" in err
