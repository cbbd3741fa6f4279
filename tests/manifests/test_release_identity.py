"""An app is its path, its namespace and, for a chart from a repository, its release.

Two HelmReleases in one file and one namespace (gitops-istio's Istio releases) are
two apps: the loader asked for one (``deployer``) resolves that release's chart and
no other, and a release the path does not deploy is an error, never an empty app.
The charts here come from a HelmRepository no manifest declares, so each release the
loader takes up is refused by name, before any pull or render: which
releases it took up is read from those errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.origin import FieldOrigin
from gitmedic.detectors.snapshot import Obj, Source
from gitmedic.reconciler.config import AppConfig, ConfigError, DeployedBy, HelmConfig
from gitmedic.reconciler.manifests.apps import load_apps_each
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.rendered import NotEditable, own_environment
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.manifests.helpers import commit_all, init_repo, write

RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: NAME, namespace: istio-system}
spec:
  chart:
    spec:
      chart: CHART
      sourceRef: {kind: HelmRepository, name: undeclared}
"""
FILE = "---\n".join(
    RELEASE.replace("NAME", name).replace("CHART", chart)
    for name, chart in (("istio-base", "base"), ("istiod", "istiod"))
)
CONFIG = """version: 1
apps:
  - {name: base, deployed_by: {file: istio.yaml, name: istio-base}}
  - {name: istiod, deployed_by: {file: istio.yaml, name: istiod}}
"""


def releases(errors: Sequence[ManifestError]) -> list[str]:
    """The release each error refuses (``HelmRelease istiod takes chart istiod from ...``)."""
    words = [e.message.split(" ") for e in errors]
    assert all(w[0] == "HelmRelease" and "takes chart" in " ".join(w) for w in words), words
    return [w[1] for w in words]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write(tmp_path / "repo", {"istio.yaml": FILE, ".gitmedic/config.yaml": CONFIG})


def test_the_release_asked_for_is_the_only_one_taken_up(repo: Path) -> None:
    istiod = load_desired(repo / "istio.yaml", namespace="istio-system", deployer="istiod")
    base = load_desired(repo / "istio.yaml", namespace="istio-system", deployer="istio-base")
    assert releases(istiod.errors) == ["istiod"]
    assert releases(base.errors) == ["istio-base"]


def test_without_a_release_every_app_of_the_path_is_taken_up(repo: Path) -> None:
    state = load_desired(repo / "istio.yaml", namespace="istio-system")
    assert sorted(releases(state.errors)) == ["istio-base", "istiod"]


def test_a_release_the_path_does_not_deploy_is_an_error(repo: Path) -> None:
    state = load_desired(repo / "istio.yaml", namespace="istio-system", deployer="gateway")
    [error] = state.errors
    assert error.message.startswith("no HelmRelease or Argo CD Application gateway in istio.yaml")


def test_detect_s_app_reads_that_app_alone(repo: Path) -> None:
    _, states = load_apps_each(repo, app="istiod")
    assert [releases(s.errors) for s in states] == [["istiod"]]
    _, every = load_apps_each(repo)
    assert sorted(r for s in every for r in releases(s.errors)) == ["istio-base", "istiod"]


def test_an_app_the_config_does_not_name_is_refused_naming_its_apps(repo: Path) -> None:
    with pytest.raises(ConfigError, match=r"--app gateway: .* no such app \(its apps: base, "):
        load_apps_each(repo, app="gateway")


def test_only_a_release_of_a_chart_from_a_repository_is_named_by_its_release() -> None:
    remote = AppConfig("istiod", "istio", deployed_by=DeployedBy("istio/istio.yaml", "istiod"))
    local = AppConfig(
        "web", "charts/web", helm=HelmConfig(), deployed_by=DeployedBy("web.yaml", "web")
    )
    assert (remote.deployer, local.deployer, AppConfig("a", "a").deployer) == ("istiod", "", "")


IMAGE = ("spec", "template", "spec", "containers", 0, "image")


def istiod(holder: Resource | None) -> Obj:
    """istiod's rendered Deployment, its image set by ``global.tag`` of ``holder`` (None:
    of a values file)."""
    origin = FieldOrigin(
        "spec.template.spec.containers[0].image", "istio.yaml", 30, "global.tag", holder=holder
    )
    body = {"spec": {"template": {"spec": {"containers": [{"name": "d", "image": "p:1"}]}}}}
    ref = Resource("Deployment", "istio-system", "istiod", "apps/v1")
    return Obj(ref, body, Source("istio.yaml", 20, 1, origins=(origin,), renderer="helm"))


def test_a_fix_in_the_release_s_own_values_leaves_the_other_releases_of_its_file_alone(
    repo: Path,
) -> None:
    init_repo(repo)
    commit_all(repo, "two releases in one file")
    app = ManifestRepo(repo, "istio.yaml", "istio-system", deployer="istiod")
    own = Resource("HelmRelease", "istio-system", "istiod")
    own_environment(app, istiod(own), IMAGE, ["istio.yaml"])  # base renders none of it
    with pytest.raises(NotEditable, match=r"istio\.yaml is also rendered into base, where"):
        own_environment(app, istiod(None), IMAGE, ["istio.yaml"])
