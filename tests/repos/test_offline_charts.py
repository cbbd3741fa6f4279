"""Remote charts rendered offline through the real CLI: ``gitmedic charts add`` puts
packages pulled elsewhere into the chart cache, and a chart constraint resolves against
the cached versions of its declared repository when that repository cannot be reached.

The packages are the real charts the corpus's two Flux apps take from remote
repositories (tests/fixtures/charts, pinned), and detect runs on the corpus's own copies
of flux2-kustomize-helm-example and flux2-monitoring-example, whose repositories
(ghcr.io, quay.io, docker.io, grafana's and podinfo's GitHub pages) this machine cannot
reach.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.corpus.golden import CORPUS
from tests.repos.conftest import CHART_WARNING, Run, gitmedic
from tests.repos.test_remote_charts import flux_repo, resources
from tests.support.chart_servers import helm_repository, package
from tests.support.real_charts import PODINFO, packages_of

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

ADD_HINT = "gitmedic charts add --repository"

# What each app's charts render that its files alone do not hold: (detector, kind,
# namespace, name) of findings about rendered objects, one per chart at least.
RENDERED = {
    "flux2-kustomize-helm-example": {
        (CHART_WARNING, "Deployment", "podinfo", "podinfo"),  # podinfo
        ("missing-reference", "Deployment", "envoy-gateway-system", "envoy-gateway"),  # gateway
        ("schema-invalid", "ClusterIssuer", "", "letsencrypt"),
    },
    "flux2-monitoring-example": {
        ("probe-port", "Deployment", "monitoring", "kube-prometheus-stack-kube-state-metrics"),
        ("service-selector-polluted", "Service", "monitoring", "loki-headless"),  # loki
        (
            "service-selector-unmatched",
            "Service",
            "kube-system",
            "kube-prometheus-stack-kube-proxy",
        ),
    },
}
# objects in all: the files' and every chart's (promtail's DaemonSet among the 120)
OBJECTS = {"flux2-kustomize-helm-example": 81, "flux2-monitoring-example": 120}
NAMESPACE = {
    "flux2-kustomize-helm-example": "flux-system",
    "flux2-monitoring-example": "monitoring",
}


@pytest.fixture(autouse=True)
def chart_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "chart-cache"
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, Path]]]:
    """(declared repository, package) of every chart of each app, packaged once."""
    out = tmp_path_factory.mktemp("packages")
    return {app: packages_of(app, out / app) for app in RENDERED}


def detect(app: str, *extra: str) -> Run:
    return gitmedic(
        "detect", ".", "--namespace", NAMESPACE[app], *extra, cwd=CORPUS / app, timeout=600
    )


@pytest.mark.parametrize("app", sorted(RENDERED))
def test_a_flux_app_s_remote_charts_render_offline_once_their_packages_are_added(
    app: str, packages: dict[str, list[tuple[str, Path]]], chart_cache: Path
) -> None:
    before = detect(app, "--format", "json")
    assert before.rc == 2, before.err[-3000:]
    errors = before.json()["errors"]
    for repository, pkg in packages[app]:
        chart = pkg.name.rsplit("-", 1)[0].removesuffix("-v1.21.1")
        named = [e["message"] for e in errors if e["message"].startswith(f"chart {chart} ")]
        assert named, (chart, errors)
        assert all(f"from {repository}" in m for m in named)
        assert all(f"{ADD_HINT} {repository} {chart}-VERSION.tgz" in m for m in named)
    for repository, pkg in packages[app]:
        added = gitmedic("charts", "add", "--repository", repository, pkg)
        assert added.rc == 0, added.err
        assert f"from {repository.rstrip('/')} (sha256:" in added.out
    after = detect(app, "--format", "json")
    assert after.rc in (0, 1), after.err[-3000:]
    assert after.json()["errors"] == []
    found = {
        (f["detector"], f["resource"]["kind"], f["resource"]["namespace"], f["resource"]["name"])
        for f in after.json()["findings"]
    }
    assert RENDERED[app] <= found, sorted(found)
    assert f" in {OBJECTS[app]} objects from " in detect(app).out
    assert "Traceback" not in after.err


def test_a_constraint_resolves_offline_against_the_versions_pulled_before(
    tmp_path: Path,
) -> None:
    served = tmp_path / "served"
    package(PODINFO, served)
    with helm_repository(served) as url:
        repo = flux_repo(tmp_path, url)
        online = gitmedic("detect", repo / "apps/staging", "--format", "json")
    # the server is gone: its port refuses; ">=1.0.0-alpha" picks the cached 6.14.1
    offline = gitmedic("detect", repo / "apps/staging", "--format", "json")
    assert (CHART_WARNING, "Deployment", "podinfo", "podinfo") in resources(online)
    assert resources(offline) == resources(online)
    values = repo / "apps/staging/podinfo-values.yaml"
    values.write_text(values.read_text().replace(">=1.0.0-alpha", "<6.0.0"))
    unmet = gitmedic("detect", repo / "apps/staging", "--format", "json")
    assert unmet.rc == 2, unmet.out
    [error] = unmet.json()["errors"]
    assert error["message"].startswith(f"chart podinfo <6.0.0 from {url}, declared in ")
    assert "Connection refused" in error["message"]
    assert f"{ADD_HINT} {url} podinfo-VERSION.tgz" in error["message"]


def test_a_package_serves_only_the_repository_it_was_added_for(tmp_path: Path) -> None:
    pkg = package(PODINFO, tmp_path / "pkg")
    added = gitmedic("charts", "add", "--repository", "https://charts.example.com/", pkg)
    assert added.rc == 0, added.err
    assert "added chart podinfo 6.14.1 from https://charts.example.com (sha256:" in added.out
    with socket.socket() as closed:  # a port nothing listens on: the repository is down
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    run = gitmedic("detect", flux_repo(tmp_path, url) / "apps/staging", "--format", "json")
    assert run.rc == 2, run.out
    [error] = run.json()["errors"]
    assert error["message"].startswith(f"chart podinfo >=1.0.0-alpha from {url}, ")


def test_charts_add_refuses_what_is_not_a_chart_and_adds_nothing(
    tmp_path: Path, chart_cache: Path
) -> None:
    pkg = package(PODINFO, tmp_path / "pkg")
    notes = tmp_path / "notes.tgz"
    notes.write_text("not a package\n")
    run = gitmedic("charts", "add", "--repository", "https://charts.example.com", pkg, notes)
    assert run.rc == 2
    assert f"gitmedic: error: {notes} is not a chart package (a gzip tar)" in run.err
    assert not chart_cache.exists()
    elsewhere = gitmedic("charts", "add", "--repository", "file:///srv/charts", pkg)
    assert elsewhere.rc == 2
    assert "'file:///srv/charts' is not a chart repository gitmedic pulls from" in elsewhere.err
    assert not chart_cache.exists()


def test_an_initialised_flux_example_detects_every_app_offline_with_its_charts_added(
    tmp_path: Path, packages: dict[str, list[tuple[str, Path]]]
) -> None:
    """Issue 23: after ``gitmedic init .`` on Flux's kustomize-helm example, ``detect .``
    evaluates each app it wrote; offline it can only say which charts it cannot pull (exit
    2) until their packages are added, then it exits 0 or 1 with every release rendered."""
    from tests.repos.test_discovered_repos import adopted

    repo, _ = adopted(tmp_path, "flux2-kustomize-helm-example")
    offline = gitmedic("detect", ".", "--format", "json", cwd=repo, timeout=600)
    assert offline.rc == 2, offline.out
    messages = [e["message"] for e in offline.json()["errors"]]
    assert messages and all("cannot be pulled" in m and ADD_HINT in m for m in messages)
    for repository, pkg in packages["flux2-kustomize-helm-example"]:
        assert gitmedic("charts", "add", "--repository", repository, pkg).rc == 0
    run = gitmedic("detect", ".", "--format", "json", cwd=repo, timeout=600)
    assert run.rc in (0, 1), run.err[-3000:]
    assert run.json()["errors"] == []
    found = {(f["resource"]["kind"], f["resource"]["name"]) for f in run.json()["findings"]}
    assert {("Deployment", "podinfo"), ("Deployment", "envoy-gateway")} <= found, sorted(found)
