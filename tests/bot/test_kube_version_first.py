"""Charts render for the live cluster's Kubernetes version, else the config's, else a
current one (:mod:`gitmedic.reconciler.manifests.kube_version`).

The config's ``kubernetes_version`` is a fallback: with a cluster connected, a chart
whose ``kubeVersion`` only the cluster's version meets renders, and ``run --cluster
kube`` records that version before it reads any app (the apps of a shared namespace
render then).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gitmedic.bot.cli import run as run_cmd
from gitmedic.bot.cli.main import build_parser
from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.manifests import kube_version
from gitmedic.reconciler.manifests.apps import load_apps_desired
from tests.live.kmock_thread import kmock_server
from tests.manifests.helpers import commit_all, init_repo, write

# the cluster (kmock) says v1.26.4+k3s1; the config says 1.30
VERSION = {
    "major": "1",
    "minor": "26",
    "gitVersion": "v1.26.4+k3s1",
    "gitCommit": "8d0255af",
    "gitTreeState": "clean",
    "buildDate": "2023-04-20T00:33:18Z",
    "goVersion": "go1.19.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}
ONLY_1_26 = {
    "chart/Chart.yaml": (
        "apiVersion: v2\nname: versioned\nversion: 1.0.0\nkubeVersion: '>=1.26.0-0 <1.27.0-0'\n"
    ),
    "chart/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: versioned}\n"
        "data: {kube: '{{ .Capabilities.KubeVersion.Version }}'}\n"
    ),
    "web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
    ".gitmedic/config.yaml": (
        "version: 1\nkubernetes_version: '1.30'\napps:\n"
        "  - {name: versioned, path: chart, namespace: shop}\n"
        "  - {name: web, path: web, namespace: shop}\n"
    ),
}


def repo_of(tmp_path: Path) -> Path:
    repo = write(init_repo(tmp_path / "repo"), ONLY_1_26)
    commit_all(repo, "a chart for the cluster's version")
    return repo


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_the_cluster_s_version_wins_over_the_config_s(tmp_path: Path) -> None:
    repo = repo_of(tmp_path)
    without = load_apps_desired(repo / "chart")
    assert any("incompatible with Kubernetes v1.30" in e.message for e in without.errors)
    assert kube_version.record_cluster_version("v1.26.4+k3s1") == "1.26.4"
    state = load_apps_desired(repo / "chart")
    assert state.errors == [], state.errors
    [cm] = [o for o in state.snapshot if o.name == "versioned"]
    assert cm.body["data"] == {"kube": "v1.26.4"}
    asked = load_apps_desired(repo / "chart", kubernetes_version="1.30")
    assert any("incompatible with Kubernetes v1.30" in e.message for e in asked.errors), (
        "a version asked on the command line still comes first"
    )


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_run_on_a_cluster_records_its_version_before_reading_the_apps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_of(tmp_path)
    built: list[run_cmd.LoopConfig] = []

    def no_loops(configs: list[run_cmd.LoopConfig], *_: object, **__: object) -> object:
        built.extend(configs)  # the apps as read, siblings rendered: no loop needed here
        return [], {}

    monkeypatch.setattr(run_cmd, "_loops", no_loops)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with kmock_server() as server:
        monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path)))
        server.call(lambda: server.emulator["get /version/"] << VERSION)
        args: argparse.Namespace = build_parser().parse_args(
            ["run", str(repo), "--cluster", "kube", "--forge", "local", "--once"]
        )
        assert run_cmd.run_on(repo, args, "kube", LocalForge(repo)) == 0
    assert kube_version.cluster_version() == "1.26.4"
    web = next(c for c in built if c.app == "web")
    assert ("ConfigMap", "versioned") in web.siblings, "the chart rendered for the cluster's"
