"""Charts from a Helm repository and an OCI registry, served on 127.0.0.1 by the tests, rendered
through the real ``gitmedic detect``: declared repositories only, offline with a vendoring hint.

The chart under test is podinfo's (``kubeVersion: >=1.23.0-0``, its LICENSE in the package),
the repository Flux's kustomize-helm example (a HelmRelease and its HelmRepository in a base,
values patched per environment).
"""

from __future__ import annotations

import hashlib
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import CHART_WARNING, Run, gitmedic
from tests.support.chart_servers import (
    helm_repository,
    oci_registry,
    package,
    push,
    redirecting_repository,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
FLUX_EXAMPLE = DATA / "gitops-repos/flux2-kustomize-helm-example"
DECLARED = "https://stefanprodan.github.io/podinfo"


@pytest.fixture(autouse=True)
def chart_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "chart-cache"
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(cache))
    return cache


@pytest.fixture
def packages(tmp_path: Path) -> Path:
    folder = tmp_path / "served"
    package(PODINFO, folder)
    return folder


@pytest.fixture
def helm_repo(packages: Path) -> Iterator[str]:
    with helm_repository(packages) as url:
        yield url


@pytest.fixture
def registry(tmp_path: Path, packages: Path) -> Iterator[str]:
    with oci_registry(tmp_path / "registry.log") as address:
        push(tmp_path / "pusher", packages / "podinfo-6.14.1.tgz", address)
        yield address


def flux_repo(tmp_path: Path, url: str) -> Path:
    """Flux's example (apps/ and its LICENSE) with its HelmRepository pointing at ``url``."""
    repo = tmp_path / "repo"
    shutil.copytree(FLUX_EXAMPLE / "apps", repo / "apps")
    shutil.copy(FLUX_EXAMPLE / "LICENSE", repo / "LICENSE")
    declared = repo / "apps/base/podinfo/repository.yaml"
    assert DECLARED in declared.read_text()
    declared.write_text(declared.read_text().replace(DECLARED, url))
    init_repo(repo)
    commit_all(repo)
    return repo


def resources(run: Run) -> set[tuple[str, str, str, str]]:
    """(detector, kind, namespace, name) of each finding, from detect's JSON."""
    assert run.rc in (0, 1), run.err
    report = run.json()
    assert report["errors"] == [], report["errors"]
    return {
        (f["detector"], f["resource"]["kind"], f["resource"]["namespace"], f["resource"]["name"])
        for f in report["findings"]
    }


def test_a_helm_release_from_a_helm_repository_renders(
    tmp_path: Path, helm_repo: str, packages: Path, chart_cache: Path
) -> None:
    repo = flux_repo(tmp_path, helm_repo)
    run = gitmedic("detect", repo / "apps/staging", "--format", "json")
    assert (CHART_WARNING, "Deployment", "podinfo", "podinfo") in resources(run)
    text = gitmedic("detect", repo / "apps/staging")
    assert "Deployment/podinfo/podinfo  (apps/base/podinfo/release.yaml:11)" in text.out
    assert "in 9 objects" in text.out  # Namespace, HelmRepository, HelmRelease and the chart's 6
    digest = hashlib.sha256((packages / "podinfo-6.14.1.tgz").read_bytes()).hexdigest()
    assert (chart_cache / f"sha256-{digest}" / "podinfo-6.14.1.tgz").is_file()


def test_the_staging_overlay_s_values_reach_the_rendered_chart(
    tmp_path: Path, helm_repo: str
) -> None:
    from gitmedic.reconciler.manifests.load import load_desired

    repo = flux_repo(tmp_path, helm_repo)
    state = load_desired(repo / "apps/staging")
    assert state.errors == []
    route = next(o for o in state.snapshot if o.kind == "HTTPRoute")
    redis = next(o for o in state.snapshot if o.kind == "Deployment" and "redis" in o.ref.name)
    assert route.body["spec"]["hostnames"] == ["podinfo.staging"]  # type: ignore[index]
    image = redis.body["spec"]["template"]["spec"]["containers"][0]["image"]  # type: ignore[index]
    assert image == "public.ecr.aws/docker/library/redis:8.6.2"  # the base's inline values


ARGO_OCI = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: podinfo, namespace: argocd}
spec:
  project: default
  source:
    repoURL: REGISTRY/charts
    chart: podinfo
    targetRevision: 6.14.1
    helm:
      valuesObject:
        resources:
          limits:
            memory: 1Mi
  destination: {server: https://kubernetes.default.svc, namespace: prod}
"""


def test_an_argo_application_with_an_oci_chart_renders_and_then_offline_from_the_cache(
    tmp_path: Path, packages: Path
) -> None:
    repo = tmp_path / "repo"
    with oci_registry(tmp_path / "registry.log") as address:
        push(tmp_path / "pusher", packages / "podinfo-6.14.1.tgz", address)
        write(repo, {"argocd/podinfo.yaml": ARGO_OCI.replace("REGISTRY", address)})
        init_repo(repo)
        commit_all(repo)
        online = gitmedic("detect", repo / "argocd/podinfo.yaml", "--format", "json")
        assert ("memory-limit-too-small", "Deployment", "prod", "podinfo") in resources(online)
        text = gitmedic("detect", repo / "argocd/podinfo.yaml")
        assert "set by resources.limits.memory at argocd/podinfo.yaml:14" in text.out
    offline = gitmedic("detect", repo / "argocd/podinfo.yaml", "--format", "json")
    assert resources(offline) == resources(online)  # 6.14.1 exactly: the cached package


FLUX_OCI = """apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 10m
  url: oci://REGISTRY/charts/podinfo
  ref: {semver: "6.x"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: podinfo}
"""


def test_a_flux_release_from_an_oci_repository_renders(tmp_path: Path, registry: str) -> None:
    repo = write(tmp_path / "repo", {"apps/podinfo.yaml": FLUX_OCI.replace("REGISTRY", registry)})
    run = gitmedic("detect", repo / "apps", "--format", "json")
    assert (CHART_WARNING, "Deployment", "apps", "podinfo") in resources(run)


UNDECLARED = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  chart:
    spec:
      chart: podinfo
      sourceRef: {kind: HelmRepository, name: elsewhere, namespace: flux-system}
"""


def test_a_repository_the_manifests_do_not_declare_is_refused_unless_the_work_tree_allows_it(
    tmp_path: Path, helm_repo: str
) -> None:
    repo = write(tmp_path / "repo", {"apps/release.yaml": UNDECLARED})
    init_repo(repo)
    commit_all(repo)
    refused = gitmedic("detect", repo / "apps", "--format", "json")
    assert refused.rc == 2
    [error] = refused.json()["errors"]
    assert error["file"] == "apps/release.yaml"
    assert "from HelmRepository flux-system/elsewhere, which no manifest" in error["message"]
    allow = (
        "version: 1\napps: [{name: podinfo, path: apps, namespace: apps}]\n"
        f"manifests:\n  chart_repositories:\n    - {{url: '{helm_repo}', name: elsewhere}}\n"
    )
    write(repo, {".gitmedic/config.yaml": allow})  # the work tree's config, not committed
    allowed = gitmedic("detect", repo / "apps", "--format", "json")
    assert (CHART_WARNING, "Deployment", "apps", "podinfo") in resources(allowed)


def test_an_index_serving_the_chart_from_another_host_is_refused(
    tmp_path: Path, packages: Path
) -> None:
    with helm_repository(packages, url_of_packages="http://127.0.0.2:9") as url:
        repo = flux_repo(tmp_path, url)
        run = gitmedic("detect", repo / "apps/staging", "--format", "json")
    assert run.rc == 2
    [error] = run.json()["errors"]
    assert "serves it from http://127.0.0.2:9/podinfo-6.14.1.tgz, outside the" in error["message"]


def test_a_package_redirected_to_another_host_is_refused(tmp_path: Path, packages: Path) -> None:
    """The index is the declared repository's, its package URLs on its host; the package
    answers with a redirect to another host (localhost, not 127.0.0.1), which serves it."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(packages, elsewhere)
    with helm_repository(elsewhere) as other:
        other = other.replace("127.0.0.1", "localhost")
        with redirecting_repository(packages, to=other) as (url, asked):
            repo = flux_repo(tmp_path, url)
            run = gitmedic("detect", repo / "apps/staging", "--format", "json")
    assert run.rc == 2, run.out
    [error] = run.json()["errors"]
    assert error["message"].startswith(f"chart podinfo >=1.0.0-alpha from {url}, declared in ")
    assert f"it redirects to another host ({other}/podinfo-6.14.1.tgz)" in error["message"]
    assert "/podinfo-6.14.1.tgz" in asked, "the package was asked of the declared repository"


def test_offline_names_the_chart_the_repository_and_how_to_vendor_it(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the repository is down
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    repo = flux_repo(tmp_path, url)
    run = gitmedic("detect", repo / "apps/production", "--format", "json")
    assert run.rc == 2
    [error] = run.json()["errors"]
    assert (error["file"], error["line"]) == ("apps/base/podinfo/release.yaml", 11)
    message = error["message"]
    assert message.startswith(f"chart podinfo >=1.0.0 from {url}, declared in ")
    assert "Connection refused" in message
    assert f"vendor it into the repository (helm pull podinfo --repo {url}" in message


KUBE_VERSION_CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: versioned\nversion: 1.0.0\nkubeVersion: '>=1.23'\n",
    "chart/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: versioned}\n"
        "data: {kube: '{{ .Capabilities.KubeVersion.Version }}'}\n"
    ),
}


@pytest.mark.parametrize(
    ("config", "rendered"), [("", "v1.33"), ("kubernetes_version: '1.30'\n", "v1.30")]
)
def test_a_chart_needing_kubernetes_1_23_renders_for_the_configured_or_a_current_version(
    tmp_path: Path, config: str, rendered: str
) -> None:
    from gitmedic.reconciler.manifests.load import load_desired

    files = {**KUBE_VERSION_CHART}
    if config:
        files[".gitmedic/config.yaml"] = f"version: 1\napps: [{{name: a, path: chart}}]\n{config}"
    repo = init_repo(write(tmp_path / "repo", files))
    run = gitmedic("detect", repo / "chart", "--format", "json")
    assert run.rc == 0 and run.json()["errors"] == [], run.out
    [cm] = list(load_desired(repo / "chart").snapshot)
    assert cm.body["data"] == {"kube": rendered}


def test_a_chart_the_configured_version_does_not_satisfy_says_so(tmp_path: Path) -> None:
    files = {
        **KUBE_VERSION_CHART,
        ".gitmedic/config.yaml": "version: 1\napps: [{name: a, path: chart}]\n"
        "kubernetes_version: '1.26'\n",
    }
    files["chart/Chart.yaml"] = files["chart/Chart.yaml"].replace(">=1.23", ">=1.30")
    repo = init_repo(write(tmp_path / "repo", files))
    run = gitmedic("detect", repo / "chart", "--format", "json")
    assert run.rc == 2
    [error] = run.json()["errors"]
    assert "incompatible with Kubernetes v1.26" in error["message"]


REDIS_DEPENDENCY = (
    "dependencies:\n- name: memo\n  version: 1.0.0\n  repository: https://charts.example.com\n"
)
VENDORED = {
    "Chart.yaml": "apiVersion: v2\nname: memo\nversion: 1.0.0\n",
    "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vendored-memo}\n",
}


@pytest.mark.parametrize("form", ["folder", "package"])
def test_a_dependency_vendored_under_charts_renders_with_its_parent(
    tmp_path: Path, form: str
) -> None:
    chart = tmp_path / "podinfo"
    shutil.copytree(PODINFO, chart)
    with (chart / "Chart.yaml").open("a") as fh:
        fh.write(REDIS_DEPENDENCY)
    vendored = write(tmp_path / "memo", VENDORED)
    if form == "folder":
        shutil.copytree(vendored, chart / "charts/memo")
    else:
        package(vendored, chart / "charts")
    run = gitmedic("detect", chart, "--format", "json")
    assert run.rc == 1 and run.json()["errors"] == [], run.out
    from gitmedic.reconciler.manifests.load import load_desired

    rendered = {(o.kind, o.ref.name) for o in load_desired(chart).snapshot}
    assert rendered == {
        ("Deployment", "release-podinfo"),
        ("Service", "release-podinfo"),
        ("ConfigMap", "vendored-memo"),
    }


UMBRELLA = """apiVersion: v2
name: umbrella
version: 1.0.0
dependencies:
  - name: podinfo
    version: 6.14.1
    repository: REPOSITORY
"""


@pytest.mark.parametrize("served_by", ["helm repository", "oci registry"])
def test_a_dependency_from_the_repository_chart_yaml_declares_is_pulled_and_renders(
    tmp_path: Path, packages: Path, served_by: str
) -> None:
    from gitmedic.reconciler.manifests.load import load_desired

    def render(repository: str) -> set[tuple[str, str]]:
        chart = write(
            tmp_path / "umbrella", {"Chart.yaml": UMBRELLA.replace("REPOSITORY", repository)}
        )
        run = gitmedic("detect", chart, "--format", "json")
        assert (CHART_WARNING, "Deployment", "default", "release-podinfo") in resources(run)
        assert not (chart / "charts").exists()  # pulled into a copy, never into the repository
        return {(o.kind, o.ref.name) for o in load_desired(chart).snapshot}

    if served_by == "helm repository":
        with helm_repository(packages) as url:
            rendered = render(url)
    else:
        with oci_registry(tmp_path / "registry.log") as address:
            rendered = render(push(tmp_path / "pusher", packages / "podinfo-6.14.1.tgz", address))
    assert rendered == {("Deployment", "release-podinfo"), ("Service", "release-podinfo")}


def test_a_fault_in_the_staging_overlay_of_flux_s_example_is_fixed_there_only(
    tmp_path: Path, helm_repo: str
) -> None:
    """Flux's whole example (issue 23's fault-fix acceptance): its podinfo chart from the
    HelmRepository it declares, served here; its cert-manager and envoy-gateway charts
    (OCI registries on the internet) cannot be pulled offline and are said, not run."""
    repo = tmp_path / "repo"
    shutil.copytree(FLUX_EXAMPLE, repo)
    declared = repo / "apps/base/podinfo/repository.yaml"
    declared.write_text(declared.read_text().replace(DECLARED, helm_repo))
    init_repo(repo)
    commit_all(repo, "the team's repository")
    init = gitmedic("init", ".", cwd=repo)
    assert "  podinfo-staging: " in init.out and "  podinfo-production: " in init.out, init.out
    commit_all(repo, "gitmedic init")
    values = repo / "apps/staging/podinfo-values.yaml"
    fault = "  values:\n    redis:\n      tag: 0.0.0-missing\n"
    values.write_text(values.read_text().replace("  values:\n", fault))
    bad = commit_all(repo, "staging: a redis nobody pushed")

    run = gitmedic("run", ".", "--once", "--json", cwd=repo, timeout=600)

    assert "Traceback" not in run.err, run.err[-3000:]
    changed = git(repo, "diff", "--name-only", bad, "main", "--", ".", ":!.gitmedic").split()
    assert changed == ["apps/staging/podinfo-values.yaml"], "no file of another environment"
    assert "0.0.0-missing" not in git(repo, "show", "main:apps/staging/podinfo-values.yaml")
    apps = {a["app"]: a for a in run.json()["apps"]}
    (fix,) = [t for i in apps["podinfo-staging"]["incidents"] for t in i["transactions"]]
    assert fix["status"] == "committed", fix
    assert not [i for i in apps["podinfo-production"]["incidents"] if i["transactions"]]


TWO_RELEASES = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {url: URL}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: web}
spec:
  chart:
    spec:
      chart: podinfo
      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: missing, namespace: other}
spec:
  chart:
    spec:
      chart: missing
      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}
"""


def test_an_app_of_a_file_holding_several_releases_renders_its_own_only(
    tmp_path: Path, helm_repo: str
) -> None:
    """Each app of ``init`` is one release (``deployed_by``): the other release of the file,
    whose chart the repository does not serve, is not this app's error."""
    from gitmedic.reconciler.manifests.load import load_desired

    config = (
        "version: 1\napps:\n"
        "  - {name: podinfo, deployed_by: {file: releases.yaml, name: podinfo}}\n"
        "  - {name: missing, deployed_by: {file: releases.yaml, name: missing}}\n"
    )
    repo = tmp_path / "repo"
    files = {"releases.yaml": TWO_RELEASES.replace("URL", helm_repo)}
    write(repo, {**files, ".gitmedic/config.yaml": config})
    init_repo(repo)
    commit_all(repo)

    own = load_desired(repo / "releases.yaml", namespace="web")
    other = load_desired(repo / "releases.yaml", namespace="other")

    assert own.errors == [] and any(o.kind == "Deployment" for o in own.snapshot)
    assert [e.message.split(" from ")[0] for e in other.errors] == ["chart missing (newest)"]
