"""One app per release: gitops-istio's three Istio HelmReleases share one file and one
namespace, and each is an app of its own through the real ``gitmedic`` command.

``init`` writes each release as an app (``deployed_by`` naming it); ``detect --app``
and ``sim status --app`` render that release's chart and no other; ``run --cluster sim
--forge local --once`` with a fault in one release's values fixes that release only: no
other release's lines, and no other file, change.

The repository's charts are on the internet; here a Helm repository on 127.0.0.1 serves
small charts of the same names (a Deployment each, its image from the values as Istio's
charts take it), and both HelmRepositories of the fixture point at it. The releases'
``version: "${version}"`` is Flux's postBuild variable, which the Kustomization
``istio-system`` takes from ``clusters/my-cluster/istio-version.yaml``: gitmedic reads
it as Flux does (a newer istiod is served too, which would be taken without it).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import gitmedic
from tests.support.chart_servers import helm_repository, package

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

ISTIO = DATA / "gitops-repos/gitops-istio"
DECLARED = ("https://istio-release.storage.googleapis.com/charts", "https://flagger.app")
VERSION = "1.19.3"  # clusters/my-cluster/istio-version.yaml, what Flux substitutes
NEWER = "1.20.0"  # served too: taken only if ${version} were read as no version
RELEASES = {"istio-base": "base", "istiod": "istiod", "istio-gateway-system": "gateway"}

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: main
          image: "{{ .Values.global.hub }}/IMAGE:{{ .Values.global.tag | default VERSION }}"
          resources:
            requests: {cpu: 10m, memory: 64Mi}
            limits: {memory: 128Mi}
---
# an Istio kind with no Kubernetes schema: detect names it (info), so what renders is seen
apiVersion: telemetry.istio.io/v1alpha1
kind: Telemetry
metadata:
  name: {{ .Release.Name }}
spec: {}
"""


def chart(name: str, image: str, version: str, telemetry: str = "") -> dict[str, str]:
    """``telemetry``: a suffix to the name of the chart's Telemetry object (which version
    rendered)."""
    template = DEPLOYMENT.replace("IMAGE", image).replace("VERSION", ".Chart.AppVersion")
    template = template.replace(
        "name: {{ .Release.Name }}\nspec: {}",
        f"name: {{{{ .Release.Name }}}}{telemetry}\nspec: {{}}",
    )
    return {
        f"{name}/Chart.yaml": (
            f"apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: {version}\n"
        ),
        f"{name}/values.yaml": "global:\n  hub: docker.io/istio\n  tag: ''\n",
        f"{name}/templates/deployment.yaml": template,
    }


@pytest.fixture(autouse=True)
def chart_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(tmp_path / "chart-cache"))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    charts = write(
        tmp_path / "charts",
        {
            **chart("base", "base", VERSION),
            **chart("istiod", "pilot", VERSION),
            **chart("gateway", "proxyv2", VERSION),
            **chart("flagger", "flagger", "1.0.0"),
            **chart("grafana", "grafana", "1.0.0"),
        },
    )
    newer = write(tmp_path / "newer", chart("istiod", "pilot", NEWER, telemetry="-newer"))
    folder = tmp_path / "served"
    for name in ("base", "istiod", "gateway", "flagger", "grafana"):
        package(charts / name, folder)
    package(newer / "istiod", folder)
    with helm_repository(folder) as url:
        yield url


def istio_repo(tmp_path: Path, url: str) -> Path:
    repo = init_repo(tmp_path / "gitops-istio")
    shutil.copytree(ISTIO, repo, dirs_exist_ok=True)
    for file in ("istio/system/istio.yaml", "istio/system/flagger.yaml"):
        text = (repo / file).read_text()
        for declared in DECLARED:
            text = text.replace(declared, url)
        (repo / file).write_text(text)
    commit_all(repo, "the team's repository, its charts served on 127.0.0.1")
    init = gitmedic("init", ".", cwd=repo)
    assert init.rc == 0, init.err
    for app in RELEASES:
        assert f"  {app}: deployed by " in init.out, init.out
    assert f"renders chart istiod {VERSION} from HelmRepository" in init.out, init.out
    commit_all(repo, "gitmedic init")
    return repo


def rendered(repo: Path, app: str) -> set[str]:
    """The releases whose chart ``detect --app`` rendered (each chart's Telemetry object)."""
    run = gitmedic("detect", ".", "--app", app, "--format", "json", cwd=repo)
    assert run.rc in (0, 1), run.out + run.err
    report = run.json()
    assert report["errors"] == [], report["errors"]
    return {
        f["resource"]["name"] for f in report["findings"] if f["resource"]["kind"] == "Telemetry"
    }


def test_each_release_of_one_file_is_an_app_rendering_its_own_chart(
    tmp_path: Path, served: str
) -> None:
    repo = istio_repo(tmp_path, served)
    config = yaml.safe_load((repo / ".gitmedic/config.yaml").read_text())
    by_name = {a["name"]: a for a in config["apps"]}
    for app, release in (("istio-base", "istio-base"), ("istiod", "istiod")):
        assert by_name[app]["deployed_by"] == {"file": "istio/system/istio.yaml", "name": release}
        assert by_name[app]["namespace"] == "istio-system"
    assert rendered(repo, "istiod") == {"istiod"}
    assert rendered(repo, "istio-base") == {"istio-base"}
    assert rendered(repo, "istio-gateway-system") == {"istio-gateway"}
    assert rendered(repo, "flagger") == {"flagger"}
    # the sim deploys the one release too, as the loop's sim does
    status = gitmedic("sim", "status", ".", "--app", "istiod", cwd=repo)
    assert status.rc == 0, status.err
    shown = [line.split() for line in status.out.splitlines()]
    assert [w[1] for w in shown if w[:1] == ["Deployment"]] == ["istiod"], status.out


FAULT = "    global:\n      istioNamespace: istio-system\n"


def test_a_fault_in_one_release_s_values_is_fixed_in_that_release_only(
    tmp_path: Path, served: str
) -> None:
    repo = istio_repo(tmp_path, served)
    file = repo / "istio/system/istio.yaml"
    text = file.read_text()
    assert text.count(FAULT) == 1
    file.write_text(text.replace(FAULT, FAULT + "      tag: 9.9.9-missing\n"))
    broken = commit_all(repo, "istiod: a release nobody pushed")

    run = gitmedic("run", ".", "--once", "--json", cwd=repo, timeout=600)

    assert "Traceback" not in run.err, run.err[-3000:]
    changed = git(repo, "diff", "--name-only", broken, "main", "--", ".", ":!.gitmedic")
    assert changed.split() == ["istio/system/istio.yaml"], "no other file changed"
    restored = git(repo, "show", "main:istio/system/istio.yaml")
    assert restored == text.strip(), "istiod's values restored, no other release's line changed"
    apps = {a["app"]: a for a in run.json()["apps"]}
    fixed = [name for name, a in apps.items() if any(i["transactions"] for i in a["incidents"])]
    assert fixed == ["istiod"], run.err[-3000:]
    (fix,) = [t for i in apps["istiod"]["incidents"] for t in i["transactions"]]
    assert fix["status"] == "committed", fix


def test_detect_on_the_whole_repository_pulls_the_version_flux_substitutes(
    tmp_path: Path, served: str
) -> None:
    repo = istio_repo(tmp_path, served)
    run = gitmedic("detect", ".", "--format", "json", cwd=repo)
    assert "${version}" not in run.out + run.err, run.err[-3000:]
    report = run.json()
    assert report["errors"] == [], report["errors"]
    telemetry = {
        f["resource"]["name"] for f in report["findings"] if f["resource"]["kind"] == "Telemetry"
    }
    assert {"istio-base", "istiod", "istio-gateway"} <= telemetry, telemetry
    assert "istiod-newer" not in telemetry, "1.19.3 from the ConfigMap, not the newest"
