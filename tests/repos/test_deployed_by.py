"""An app's chart, values files, release and namespace read from its Argo CD Application
or Flux HelmRelease; what cannot be rendered from this repository is refused by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.config import ConfigError, ValuesSource
from gitmedic.reconciler.config import parse_config as settings_of
from gitmedic.reconciler.manifests.app_charts import tree_config
from gitmedic.reconciler.manifests.config_file import parse_config
from gitmedic.reconciler.manifests.deployed_by import Deployed, DeployerError, read_deployer
from gitmedic.reconciler.manifests.tree import FsTree
from tests.manifests.helpers import write

ARGO = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: podinfo-prod, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://github.com/example/gitops.git
    path: charts/podinfo
    targetRevision: main
    helm:
      releaseName: podinfo
      valueFiles: [values-prod.yaml, ../../envs/prod/extra.yaml]
  destination: {server: https://kubernetes.default.svc, namespace: prod}
"""
FLUX = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: staging
  chart:
    spec:
      chart: ./charts/podinfo
      sourceRef: {kind: GitRepository, name: flux-system}
      valuesFiles: [charts/podinfo/values.yaml, envs/staging/values.yaml]
  valuesFrom:
    - {kind: ConfigMap, name: podinfo-values}
  values:
    replicaCount: 2
"""
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata: {name: podinfo-values, namespace: flux-system}
data:
  values.yaml: |
    ui:
      message: hello
"""
KUSTOMIZATION = "resources: [release.yaml, values.yaml]\n"


def reader(files: dict[str, str]) -> Callable[[str], str]:
    def read(rel: str) -> str:
        if rel not in files:
            raise FileNotFoundError(2, "No such file or directory", rel)
        return files[rel]

    return read


def test_an_argo_application_names_chart_values_release_and_namespace() -> None:
    found = read_deployer(reader({"argocd/prod.yaml": ARGO}), "argocd/prod.yaml")
    assert found == Deployed(
        "charts/podinfo", ("values-prod.yaml", "../../envs/prod/extra.yaml"), "podinfo", "prod"
    )


def test_a_flux_helmrelease_names_its_git_chart_values_files_configmap_and_inline_values() -> None:
    files = {
        "apps/staging/release.yaml": FLUX,
        "apps/staging/values.yaml": CONFIGMAP,
        "apps/staging/kustomization.yaml": KUSTOMIZATION,
    }
    found = read_deployer(reader(files), "apps/staging/release.yaml")
    assert found.path == "charts/podinfo"
    assert found.values == ("values.yaml", "../../envs/staging/values.yaml")
    assert (found.release, found.namespace) == ("staging-podinfo", "staging")
    assert found.sources == (
        ValuesSource(
            "apps/staging/values.yaml",
            "ConfigMap",
            "podinfo-values",
            "flux-system",
            ("data", "values.yaml"),
            editable=False,
        ),
        ValuesSource(
            "apps/staging/release.yaml", "HelmRelease", "podinfo", "flux-system", ("spec", "values")
        ),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            FLUX.replace("kind: GitRepository", "kind: Bucket"),
            "from a Bucket source; gitmedic renders from this repository and the chart "
            "repositories it declares",
        ),
        (
            FLUX.replace("  interval: 10m\n", "  chartRef: {kind: HelmChart, name: x}\n"),
            "takes its chart from HelmChart chartRef",
        ),
        (
            FLUX.replace("kind: GitRepository", "kind: HelmRepository"),
            "valuesFiles of chart './charts/podinfo' are read from its package",
        ),
        (
            ARGO.replace("path: charts/podinfo", "chart: podinfo"),
            "values files of chart 'podinfo' are read from its package",
        ),
        (
            ARGO.replace("[values-prod.yaml,", "[$values/prod.yaml,"),
            "values file $values/prod.yaml comes from another source",
        ),
        (ARGO.replace("path: charts/podinfo", "path: ../outside"), "is outside the repository"),
        (FLUX.replace("kind: ConfigMap", "kind: Secret"), "holds values not kept in Git"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "no Argo CD Application"),
        (ARGO + "---\n" + ARGO.replace("podinfo-prod", "podinfo-dev"), "say which one with name"),
    ],
)
def test_what_gitmedic_cannot_render_from_the_repo_is_refused(text: str, message: str) -> None:
    files = {"d/app.yaml": text, "d/kustomization.yaml": KUSTOMIZATION}
    with pytest.raises(DeployerError, match=message.replace("$", r"\$")):
        read_deployer(reader(files), "d/app.yaml")


def test_a_configmap_values_from_that_the_repo_does_not_declare_is_refused() -> None:
    files = {"d/app.yaml": FLUX, "d/kustomization.yaml": "resources: [app.yaml]\n"}
    with pytest.raises(DeployerError, match=r"ConfigMap podinfo-values .* is not declared in d/"):
        read_deployer(reader(files), "d/app.yaml")


def test_the_config_fills_an_app_from_its_deployer_and_names_a_bad_reference() -> None:
    data = {"version": 1, "apps": [{"name": "prod", "deployed_by": {"file": "argocd/prod.yaml"}}]}
    app = parse_config(data, read=reader({"argocd/prod.yaml": ARGO})).apps[0]
    assert (app.path, app.namespace) == ("charts/podinfo", "prod")
    assert app.helm is not None and app.helm.release == "podinfo"
    assert app.helm.values == ("values-prod.yaml", "../../envs/prod/extra.yaml")
    with pytest.raises(ConfigError, match=r"apps.prod.deployed_by: argocd/prod.yaml: No such"):
        parse_config(data, read=reader({}))
    wrong = {**data["apps"][0], "path": "charts/other"}  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="deploys chart charts/podinfo, but path says"):
        parse_config({**data, "apps": [wrong]}, read=reader({"argocd/prod.yaml": ARGO}))
    with pytest.raises(ConfigError, match=r"apps\[0\]: .* is not valid under any"):
        parse_config({"version": 1, "apps": [{"name": "x"}]})


def test_a_changed_application_is_read_again_with_the_same_config(tmp_path: Path) -> None:
    config = "version: 1\napps:\n  - {name: prod, deployed_by: {file: argocd/prod.yaml}}\n"
    write(tmp_path, {".gitmedic/config.yaml": config, "argocd/prod.yaml": ARGO})
    tree = FsTree(tmp_path)
    first = tree_config(tree)
    assert first is not None and first.apps[0].helm is not None
    assert first.apps[0].helm.values[0] == "values-prod.yaml"
    write(tmp_path, {"argocd/prod.yaml": ARGO.replace("values-prod.yaml", "values-eu.yaml")})
    again = tree_config(tree)
    assert again is not None and again.apps[0].helm is not None
    assert again.apps[0].helm.values[0] == "values-eu.yaml"


OVERLAY = {
    "apps/base/kustomization.yaml": "namespace: web\nresources: [release.yaml]\n",
    "apps/base/release.yaml": FLUX,
    "apps/staging/kustomization.yaml": "resources: [../base]\npatches:\n  - path: values.yaml\n",
    "apps/staging/values.yaml": (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: podinfo, namespace: flux-system}\nspec:\n  values:\n    replicaCount: 3\n"
    ),
}


def test_a_helmrelease_an_overlay_patches_layers_the_base_s_values_then_the_patch_s() -> None:
    files = {
        **OVERLAY,
        "apps/base/podinfo-values.yaml": CONFIGMAP,
        "apps/base/kustomization.yaml": "resources: [release.yaml, podinfo-values.yaml]\n",
    }
    found = read_deployer(reader(files), "apps/staging")
    assert found.path == "charts/podinfo"
    assert [(s.file, s.prefix) for s in found.sources] == [
        ("apps/base/podinfo-values.yaml", ("data", "values.yaml")),
        ("apps/base/release.yaml", ("spec", "values")),
        ("apps/staging/values.yaml", ("spec", "values")),
    ]


@pytest.mark.parametrize(
    ("kustomization", "message"),
    [
        ("resources: [../base]\npatchesJson6902: [{path: p.yaml}]\n", "JSON 6902 patches"),
        ("resources: [../base]\npatches:\n  - patch: '[]'\n", "an inline patch is not read"),
        ("resources: [https://example.com/base]\n", "remote resource"),
        ("resources: [../../../x]\n", "outside the repository"),
        ("resources: []\n", "renders no Flux HelmRelease"),
    ],
)
def test_an_overlay_gitmedic_cannot_read_without_kustomize_is_refused(
    kustomization: str, message: str
) -> None:
    files = {**OVERLAY, "apps/staging/kustomization.yaml": kustomization}
    with pytest.raises(DeployerError, match=message):
        read_deployer(reader(files), "apps/staging/kustomization.yaml")


def test_the_config_model_reads_no_deployer_itself() -> None:
    """reconciler.config is below the manifests: an app ``deployed_by`` a manifest is
    filled in only by the deployer reader the manifests layer hands it."""
    data = {"version": 1, "apps": [{"name": "prod", "deployed_by": {"file": "argocd/prod.yaml"}}]}
    refused = r"apps.prod.deployed_by: argocd/prod.yaml cannot be read without the repository"
    with pytest.raises(ConfigError, match=refused):
        settings_of(data)
    with pytest.raises(ConfigError, match=refused):
        parse_config(data)  # the reading parse, given no reader
    seen: list[str] = []

    def deployer(app: Mapping[str, Any]) -> Mapping[str, Any]:
        seen.append(app["name"])
        return {**app, "path": "charts/podinfo", "namespace": "prod"}

    (app,) = settings_of(data, "cfg.yaml", deployer).apps
    assert seen == ["prod"]
    assert (app.path, app.namespace, app.helm) == ("charts/podinfo", "prod", None)
