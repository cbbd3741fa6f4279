"""``gitmedic run --cluster kube``: the live loader on kmock, Argo CD's REST API on respx."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx

from gitmedic.bot.cli.main import main
from gitmedic.reconciler.live import connect
from tests.live.kmock_thread import kmock_server
from tests.sync.conftest import velero
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

ARGO = "http://argocd.test"
APPLICATION = f"{ARGO}/api/v1/applications/shop"
CONFIG = f"""version: 1
apps:
  - name: shop
    path: {APP}
    namespace: {NAMESPACE}
    engine:
      kind: argocd
      application: shop
      url: {ARGO}
      token_env: SHOP_ARGO_TOKEN
"""


@pytest.fixture
def kube(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A manifest repo with its config, and kmock as the cluster named by $KUBECONFIG."""
    repo = make_repo(tmp_path)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gitmedic config")
    with kmock_server() as server:
        monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig(tmp_path)))
        monkeypatch.setenv("SHOP_ARGO_TOKEN", "argo-t0ken")
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield repo


def run_kube(repo: Path) -> int:
    argv = ["run", str(repo), "--cluster", "kube", "--forge", "local", "--once", "--json"]
    return main([*argv, "--interval", "0", "--settle", "0"])


@pytest.mark.integration
@respx.mock
def test_a_clean_cluster_exits_0_with_no_incidents(
    kube: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    route = respx.get(APPLICATION).mock(return_value=httpx.Response(200, json=velero()))
    assert run_kube(kube) == 0
    assert json.loads(capsys.readouterr().out) == {"healthy": True, "incidents": []}
    assert route.calls.last.request.headers["Authorization"] == "Bearer argo-t0ken"


@pytest.mark.integration
@respx.mock
def test_argo_refusing_the_token_is_exit_2_with_the_reason(
    kube: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    respx.get(APPLICATION).mock(return_value=httpx.Response(401, json={"error": "no"}))
    assert run_kube(kube) == 2
    err = capsys.readouterr().err
    assert "--cluster kube: the GitOps engine cannot be used: Argo CD refused the token" in err
    assert "(HTTP 401)" in err


@pytest.mark.integration
@respx.mock
def test_argo_answering_500_is_reported_and_the_loop_carries_on(
    kube: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    respx.get(APPLICATION).mock(return_value=httpx.Response(500, text="boom"))
    with caplog.at_level(logging.WARNING):
        assert run_kube(kube) == 0
    assert "the GitOps engine did not answer usefully yet: Argo CD answered HTTP 500" in (
        caplog.text
    )
    assert json.loads(capsys.readouterr().out)["healthy"] is True


def test_a_missing_argo_token_is_exit_2_naming_the_variable(
    kube: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHOP_ARGO_TOKEN")
    assert run_kube(kube) == 2
    assert "reads its token from $SHOP_ARGO_TOKEN, which is not set" in capsys.readouterr().err


def test_kmock_is_the_cluster_read(kube: Path) -> None:
    from gitmedic.bot.controller.kube_cluster import KubeCluster
    from gitmedic.reconciler.config import EngineConfig, OracleConfig

    engine = EngineConfig(kind="argocd", url=ARGO, token_env="SHOP_ARGO_TOKEN")
    cluster = KubeCluster(NAMESPACE, engine, OracleConfig(), {"SHOP_ARGO_TOKEN": "x"}, app="shop")
    assert list(cluster.snapshot()) == [] and cluster.alerts() == []
    assert cluster.engine_name == "Argo CD (application shop)"


def test_a_kind_rbac_withholds_is_left_out_and_said_once(
    kube: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gitmedic.bot.controller.kube_cluster import KubeCluster
    from gitmedic.reconciler.config import EngineConfig, OracleConfig

    engine = EngineConfig(kind="argocd", url=ARGO, token_env="SHOP_ARGO_TOKEN")
    cluster = KubeCluster(NAMESPACE, engine, OracleConfig(), {"SHOP_ARGO_TOKEN": "x"}, app="shop")
    with kmock_server() as server:
        cluster.api = connect(kubeconfig=str(server.kubeconfig(kube.parent)))
        server.call(lambda: server.emulator[f"get /api/v1/namespaces/{NAMESPACE}/secrets"]
                    << 403 << {"message": "secrets is forbidden"})  # fmt: skip
        with caplog.at_level(logging.WARNING):
            assert list(cluster.snapshot()) == [] and list(cluster.snapshot()) == []
    [warning] = [
        r.getMessage() for r in caplog.records if "without the Secret kind" in r.getMessage()
    ]
    assert warning.startswith("reading the cluster without the Secret kind: listing secrets")
