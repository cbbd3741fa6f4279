"""Charts from repositories: which deployer names which chart, which repository it may come
from, the Kubernetes version charts render for, and vendored dependencies (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Source
from gitmedic.reconciler.config import ChartRepository, ConfigError
from gitmedic.reconciler.manifests import kube_version
from gitmedic.reconciler.manifests.chart_pull import (
    ChartPullError,
    RemoteChart,
    check_repository,
)
from gitmedic.reconciler.manifests.chart_sources import deployed_charts
from gitmedic.reconciler.manifests.config_file import parse_config
from gitmedic.reconciler.manifests.deployed_by import ChartSource, read_deployer
from gitmedic.reconciler.manifests.helm import ChartSpec, HelmError, remote_dependencies
from gitmedic.reconciler.manifests.parse import parse_text
from gitmedic.reconciler.manifests.tree import FsTree
from tests.manifests.helpers import write

RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: podinfo}
spec:
  releaseName: podinfo
  chart:
    spec:
      chart: podinfo
      version: "*"
      sourceRef: {kind: HelmRepository, name: podinfo}
  values:
    replicaCount: 2
"""
REPOSITORY = """apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: podinfo}
spec:
  url: https://charts.example.com/podinfo
"""
OCI_RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cert-manager, namespace: cert-manager}
spec:
  chartRef: {kind: OCIRepository, name: cert-manager}
"""
OCI_REPOSITORY = """apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: cert-manager, namespace: cert-manager}
spec:
  url: oci://registry.example.com/charts/cert-manager
  insecure: true
  ref: {semver: "1.x"}
"""
ARGO = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: podinfo, namespace: argocd}
spec:
  source:
    repoURL: registry.example.com/charts
    chart: podinfo
    targetRevision: 6.14.1
    helm: {valuesObject: {replicaCount: 3}}
  destination: {namespace: prod}
"""


def objects_of(tree: FsTree, *files: str) -> list[Obj]:
    out = []
    for file in files:
        for p in parse_text(tree.read_text(file), file).objects:
            meta = p.body["metadata"]
            assert isinstance(meta, dict)
            ref = Resource(
                str(p.body["kind"]),
                str(meta.get("namespace") or ""),
                str(meta["name"]),
                str(p.body["apiVersion"]),
            )
            out.append(Obj(ref, p.body, Source(file, p.line, p.document)))
    return out


def test_a_flux_release_names_its_helm_repository_and_the_newest_version() -> None:
    found = read_deployer(lambda rel: RELEASE, "apps/podinfo/release.yaml")
    assert found.remote == ChartSource(
        "podinfo",
        "",
        kind="HelmRepository",
        name="podinfo",
        namespace="podinfo",
        file="apps/podinfo/release.yaml",
    )
    assert (found.path, found.release, found.namespace) == (
        "apps/podinfo/release.yaml",
        "podinfo",
        "podinfo",
    )


def test_an_argo_chart_without_a_scheme_comes_from_an_oci_registry() -> None:
    found = read_deployer(lambda rel: ARGO, "argocd/podinfo.yaml")
    assert found.remote is not None
    assert (found.remote.url, found.remote.chart, found.remote.version) == (
        "oci://registry.example.com/charts",
        "podinfo",
        "6.14.1",
    )
    assert [s.prefix for s in found.sources] == [("spec", "source", "helm", "valuesObject")]


def test_a_release_renders_from_the_repository_the_manifests_declare(tmp_path: Path) -> None:
    tree = FsTree(write(tmp_path, {"a/release.yaml": RELEASE, "b/repo.yaml": REPOSITORY}))
    [spec], errors = deployed_charts(tree, objects_of(tree, "a/release.yaml"))
    assert errors == []
    assert spec.remote == RemoteChart(
        "https://charts.example.com/podinfo", "podinfo", "", "b/repo.yaml"
    )
    assert (spec.chart, spec.release_name, spec.namespace) == (
        "a/release.yaml",
        "podinfo",
        "podinfo",
    )
    assert spec.values_files() == []  # the package's values.yaml, not a file of the repo


def test_an_oci_repository_names_the_chart_the_version_and_plain_http(tmp_path: Path) -> None:
    tree = FsTree(write(tmp_path, {"r.yaml": OCI_RELEASE + "---\n" + OCI_REPOSITORY}))
    [spec], errors = deployed_charts(tree, objects_of(tree, "r.yaml"))
    assert errors == [] and spec.remote is not None
    assert spec.remote.reference == "oci://registry.example.com/charts/cert-manager"
    assert (spec.remote.version, spec.remote.insecure) == ("1.x", True)


def test_a_source_nothing_declares_is_refused_unless_the_work_tree_allows_it(
    tmp_path: Path,
) -> None:
    tree = FsTree(write(tmp_path, {"a/release.yaml": RELEASE}))
    specs, [error] = deployed_charts(tree, objects_of(tree, "a/release.yaml"))
    assert specs == [] and (error.file, error.line) == ("a/release.yaml", 1)
    assert "from HelmRepository podinfo/podinfo, which no manifest of this repository" in str(error)
    allowed = [ChartRepository("https://mirror.example.com", "podinfo", "podinfo")]
    [spec], errors = deployed_charts(tree, objects_of(tree, "a/release.yaml"), allowed)
    assert errors == [] and spec.remote is not None
    assert spec.remote.repository == "https://mirror.example.com"


def test_the_allow_list_is_part_of_the_config_schema() -> None:
    data = {
        "version": 1,
        "apps": [{"name": "a", "path": "a"}],
        "manifests": {"chart_repositories": [{"url": "oci://ghcr.io/org/charts"}]},
    }
    config = parse_config(data)
    assert config.manifests.chart_repositories == (ChartRepository("oci://ghcr.io/org/charts"),)
    data["manifests"] = {"chart_repositories": [{"url": "file:///etc"}]}
    with pytest.raises(ConfigError, match=r"chart_repositories\[0\]\.url"):
        parse_config(data)


@pytest.mark.parametrize(
    "url",
    [
        "file:///charts",
        "s3://bucket/charts",
        "https://user:pw@charts.example.com",
        "oci://",
        "http://169.254.169.254/latest",
    ],
)
def test_only_http_and_oci_repositories_without_credentials_are_pulled_from(url: str) -> None:
    with pytest.raises(ChartPullError, match="chart repository"):
        check_repository(url)


def test_the_kube_version_is_asked_else_the_cluster_s_else_the_config_s_else_current() -> None:
    kube_version.forget_cluster_version()
    try:
        assert kube_version.render_version(None) == kube_version.DEFAULT_KUBE_VERSION
        assert kube_version.render_version(None, "1.29") == "1.29"
        assert kube_version.record_cluster_version("v1.31.4-gke.1000") == "1.31.4"
        assert kube_version.render_version(None, "1.29") == "1.31.4"
        assert kube_version.render_version("1.27", "1.29") == "1.27"
        assert kube_version.record_cluster_version("unknown") is None
        assert kube_version.cluster_version() == "1.31.4"
    finally:
        kube_version.forget_cluster_version()


def test_a_connected_cluster_records_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubernetes import client

    from gitmedic.bot.controller.kube_cluster import record_version

    class Version:
        def __init__(self, api: Any) -> None:
            self.api = api

        def get_code(self) -> Any:
            return client.VersionInfo(
                git_version="v1.32.2",
                major="1",
                minor="32",
                build_date="",
                compiler="",
                git_commit="",
                git_tree_state="",
                go_version="",
                platform="",
            )

    monkeypatch.setattr(client, "VersionApi", Version)
    kube_version.forget_cluster_version()
    try:
        record_version(object())
        assert kube_version.render_version(None, "1.29") == "1.32.2"
    finally:
        kube_version.forget_cluster_version()


DEPENDENT = """apiVersion: v2
name: app
version: 1.0.0
dependencies:
  - name: redis
    version: 1.2.3
    repository: https://charts.example.com
"""


@pytest.mark.parametrize(
    "vendored",
    [
        {"app/charts/redis/Chart.yaml": "apiVersion: v2\nname: redis\nversion: 1.2.3\n"},
        {"app/charts/redis-1.2.3.tgz": "not read here"},
    ],
)
def test_a_dependency_vendored_under_charts_renders(
    tmp_path: Path, vendored: dict[str, str]
) -> None:
    tree = FsTree(write(tmp_path, {"app/Chart.yaml": DEPENDENT, **vendored}))
    assert remote_dependencies(tree, ChartSpec("app")) == []


@pytest.mark.parametrize(
    "other",
    [{}, {"app/charts/redis-cache/Chart.yaml": "name: redis-cache\n"}, {"app/charts/x.tgz": ""}],
)
def test_a_dependency_not_vendored_is_pulled_from_the_repository_chart_yaml_names(
    tmp_path: Path, other: dict[str, str]
) -> None:
    tree = FsTree(write(tmp_path, {"app/Chart.yaml": DEPENDENT, **other}))
    assert remote_dependencies(tree, ChartSpec("app")) == [
        RemoteChart("https://charts.example.com", "redis", "1.2.3", "app/Chart.yaml")
    ]


def test_a_dependency_from_a_repository_alias_is_refused(tmp_path: Path) -> None:
    aliased = DEPENDENT.replace("https://charts.example.com", "'@stable'")
    tree = FsTree(write(tmp_path, {"app/Chart.yaml": aliased}))
    with pytest.raises(HelmError, match="comes from @stable, a name in a helm config"):
        remote_dependencies(tree, ChartSpec("app"))


def test_an_app_deployed_by_a_release_of_a_remote_chart_is_read_at_its_overlay() -> None:
    files = {
        "apps/base/release.yaml": RELEASE,
        "apps/base/kustomization.yaml": "resources: [release.yaml]\n",
        "apps/staging/kustomization.yaml": "resources: [../base]\n",
    }

    def read(rel: str) -> str:
        if rel not in files:
            raise FileNotFoundError(2, "No such file or directory", rel)
        return files[rel]

    data = {"version": 1, "apps": [{"name": "staging", "deployed_by": {"file": "apps/staging"}}]}
    [app] = parse_config(data, read=read).apps
    assert (app.path, app.namespace, app.helm) == ("apps/staging", "podinfo", None)


def test_a_field_from_a_pulled_chart_s_defaults_is_not_edited_and_says_where_it_comes_from() -> (
    None
):
    from gitmedic.reconciler.manifests.rendered import NotEditable, field_targets

    body: dict[str, object] = {"kind": "Deployment", "spec": {"replicas": 1}}
    source = Source("argocd/podinfo.yaml", 8, renderer="helm", render_root="argocd/podinfo.yaml")
    obj = Obj(Resource("Deployment", "prod", "podinfo", "apps/v1"), body, source)
    with pytest.raises(NotEditable, match=r"comes from the chart that argocd/podinfo\.yaml pulls"):
        field_targets(obj, ("spec", "replicas"))


def test_a_repository_that_failed_is_not_asked_again_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitmedic.reconciler.manifests import chart_pull

    asked: list[str] = []
    now = [1000.0]

    def unreachable(remote: RemoteChart, key: tuple[str, str, str]) -> Path:
        asked.append(remote.chart)
        raise ChartPullError(f"{remote.describe()} cannot be pulled: unreachable")

    monkeypatch.setattr(chart_pull, "_pull_and_store", unreachable)
    monkeypatch.setattr(chart_pull.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(chart_pull, "_failed", {})
    remote = RemoteChart("https://charts.example.com", "podinfo", "6.x")
    for _ in range(3):
        with pytest.raises(ChartPullError, match="unreachable"):
            chart_pull.pull_chart(remote)
    assert asked == ["podinfo"]
    now[0] += chart_pull.FAILURE_KEPT_S
    with pytest.raises(ChartPullError):
        chart_pull.pull_chart(remote)
    assert asked == ["podinfo", "podinfo"]
