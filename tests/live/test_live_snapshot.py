"""The live loader against kmock over real HTTP, with the real kubernetes client."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import kmock
import pytest

from gitmedic.detectors import Resource
from gitmedic.reconciler.live import LIST_CALLS, LiveReadError, connect, load_live, read_live
from tests.live.kmock_thread import RESOURCES, KmockThread


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]}}  # fmt: skip


def _deploy(name: str, namespace: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"replicas": 2},
    }


def test_lists_every_kind_with_api_version_and_kind_filled_in(
    cluster: KmockThread, tmp_path: Path
) -> None:
    cluster.add([_pod("web-1", "shop"), _deploy("web", "shop"), _pod("db-0", "data")])
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    cluster.add([node])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    assert snapshot.live
    assert sorted(o.ref for o in snapshot) == [
        Resource("Deployment", "shop", "web"),
        Resource("Node", "", "n1"),
        Resource("Pod", "data", "db-0"),
        Resource("Pod", "shop", "web-1"),
    ]
    web = snapshot.get("Deployment", "shop", "web")
    assert web is not None
    assert (web.body["apiVersion"], web.body["kind"], web.ref.api_version) == (
        "apps/v1", "Deployment", "apps/v1",
    )  # fmt: skip


def test_only_read_only_list_calls_with_the_kubeconfig_token(
    cluster: KmockThread, tmp_path: Path
) -> None:
    load_live(kubeconfig=str(cluster.kubeconfig(tmp_path, token="s3cr3t")))

    requests = cluster.requests()
    assert {r.method.value for r in requests} == {"GET"}
    assert {str(r.action) for r in requests} == {"action.LIST"}
    assert len(requests) == len(LIST_CALLS)
    assert {r.headers["Authorization"] for r in requests} == {"Bearer s3cr3t"}
    assert all(r.params.get("limit") == "500" for r in requests)


def test_namespace_filter_lists_namespaced_paths_only(cluster: KmockThread, tmp_path: Path) -> None:
    cluster.add([_pod("web-1", "shop"), _pod("db-0", "data"), _deploy("web", "shop")])
    cluster.add([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)), namespace="shop")

    assert sorted(str(o.ref) for o in snapshot) == ["Deployment/shop/web", "Pod/shop/web-1"]
    paths = [r.url.path for r in cluster.requests()]
    assert all("/namespaces/shop/" in p for p in paths), paths
    assert not any(p.endswith("/nodes") for p in paths)


def test_secrets_are_listed_as_metadata_only(cluster: KmockThread, tmp_path: Path) -> None:
    secret = {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "db", "namespace": "shop", "labels": {"app": "db"},
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                                     '{"data":{"password":"aHVudGVyMg=="}}', "team": "data"}},
        "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin"},
    }  # fmt: skip
    cluster.add([secret])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    [request] = [r for r in cluster.requests() if r.url.path.endswith("/secrets")]
    assert "as=PartialObjectMetadataList" in request.headers["Accept"]
    obj = snapshot.get("Secret", "shop", "db")
    assert obj is not None
    assert obj.body == {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop", "labels": {"app": "db"},
                     "annotations": {"team": "data"}},
    }  # fmt: skip


def test_an_api_group_the_cluster_lacks_is_skipped(cluster: KmockThread, tmp_path: Path) -> None:
    def drop_hpa() -> None:
        del cluster.emulator.resources[RESOURCES["HorizontalPodAutoscaler"]]

    cluster.call(drop_hpa)
    cluster.add([_pod("web-1", "shop")])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    assert [str(o.ref) for o in snapshot] == ["Pod/shop/web-1"]
    [hpa] = [r for r in cluster.requests() if "horizontalpodautoscalers" in r.url.path]
    assert hpa.url.path == "/apis/autoscaling/v2/horizontalpodautoscalers"


def test_a_core_kind_that_answers_404_is_an_error(cluster: KmockThread, tmp_path: Path) -> None:
    def drop_pods() -> None:
        del cluster.emulator.resources[RESOURCES["Pod"]]

    cluster.call(drop_pods)
    with pytest.raises(LiveReadError, match=r"listing pods \(/api/v1/pods\): HTTP 404"):
        load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))


@pytest.mark.parametrize(
    ("reaction", "message"),
    [
        ((401, {"kind": "Status", "message": "Unauthorized"}), r"HTTP 401 Unauthorized"),
        (
            (403, {"kind": "Status", "message": 'services is forbidden: User "bot" cannot list'}),
            r"listing services \(/api/v1/services\): HTTP 403 Forbidden: services is forbidden",
        ),
        ((503, b"upstream connect error"), r"HTTP 503 Service Unavailable$"),
        ((200, b"<html>not an API</html>"), r"listing services .*: the answer is not JSON"),
        ((200, {"items": "nope"}), r"listing services .*: the answer is not a list"),
        ((200, [1, 2]), r"listing services .*: the answer is not a list"),
    ],
    ids=["401", "403", "503", "html", "items-not-a-list", "json-array"],
)
def test_bad_answers_raise_a_typed_error(
    cluster: KmockThread, tmp_path: Path, reaction: tuple[int, Any], message: str
) -> None:
    status, body = reaction

    def react() -> None:
        cluster.emulator["get /api/v1/services"] << status << body

    cluster.call(react)
    with pytest.raises(LiveReadError, match=message):
        load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: k, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    with pytest.raises(LiveReadError, match=rf"listing pods: cannot reach http://127.0.0.1:{port}"):
        load_live(kubeconfig=str(config))


def test_an_unknown_context_is_a_clear_error(cluster: KmockThread, tmp_path: Path) -> None:
    with pytest.raises(LiveReadError, match=r"cannot load kubeconfig \(context 'nope'\)"):
        load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)), context="nope")


def test_lists_are_followed_page_by_page(cluster: KmockThread, tmp_path: Path) -> None:
    def paged() -> None:
        e = cluster.emulator
        e["get /api/v1/pods", kmock.params({"continue": "p2"})] << {
            "metadata": {}, "items": [_pod("b", "x")]
        }  # fmt: skip
        e["get /api/v1/pods"] << {"metadata": {"continue": "p2"}, "items": [_pod("a", "x")]}

    cluster.call(paged)
    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    assert [o.name for o in snapshot.of_kind("Pod")] == ["a", "b"]
    pages = [r.params for r in cluster.requests() if r.url.path == "/api/v1/pods"]
    assert pages == [{"limit": "500"}, {"limit": "500", "continue": "p2"}]


def test_secrets_the_rbac_does_not_grant_are_skipped(cluster: KmockThread, tmp_path: Path) -> None:
    """The chart grants no list on Secrets by default: their 403 is not a failure."""

    def forbid() -> None:
        cluster.emulator["get /api/v1/secrets"] << 403 << {"message": "secrets is forbidden"}

    cluster.call(forbid)
    cluster.add([_pod("web-1", "shop")])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    assert [str(o.ref) for o in snapshot] == ["Pod/shop/web-1"]
    assert "Secret" not in snapshot.kinds()


def test_secrets_rbac_leaves_out_is_skipped_and_returned_as_denied(
    cluster: KmockThread, tmp_path: Path
) -> None:
    def forbid() -> None:
        cluster.emulator["get /api/v1/namespaces/shop/secrets"] << 403 << {
            "kind": "Status", "message": 'secrets is forbidden: User "bot" cannot list'
        }  # fmt: skip

    cluster.call(forbid)
    cluster.add([_pod("web-1", "shop")])
    api = connect(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    snapshot, denied = read_live(api, namespace="shop")

    assert [str(o.ref) for o in snapshot] == ["Pod/shop/web-1"]
    assert [(d.kind, str(d)) for d in denied] == [
        ("Secret", "listing secrets (/api/v1/namespaces/shop/secrets): HTTP 403 Forbidden: "
                   'secrets is forbidden: User "bot" cannot list'),
    ]  # fmt: skip


def _expire_the_first_continue_token(cluster: KmockThread, fresh: list[dict[str, Any]]) -> None:
    gone = {
        "kind": "Status",
        "code": 410,
        "reason": "Expired",
        "message": "The provided continue parameter is too old",
    }

    def react() -> None:
        e = cluster.emulator
        e["get /api/v1/pods", kmock.params({"continue": "stale"})] << 410 << gone
        e["get /api/v1/pods"][:1] << {"metadata": {"continue": "stale"}, "items": [_pod("a", "x")]}
        e["get /api/v1/pods"] << {"metadata": {}, "items": fresh}

    cluster.call(react)


def test_a_list_whose_continue_token_expired_is_listed_again_from_the_start(
    cluster: KmockThread, tmp_path: Path
) -> None:
    _expire_the_first_continue_token(cluster, [_pod("a", "x"), _pod("b", "x")])

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    assert [o.name for o in snapshot.of_kind("Pod")] == ["a", "b"], "no page of the stale list"
    pages = [r.params for r in cluster.requests() if r.url.path == "/api/v1/pods"]
    assert pages == [{"limit": "500"}, {"limit": "500", "continue": "stale"}, {"limit": "500"}]


def test_a_list_that_keeps_expiring_is_an_error_that_says_so(
    cluster: KmockThread, tmp_path: Path
) -> None:
    def react() -> None:
        e = cluster.emulator
        e["get /api/v1/pods", kmock.params({"continue": "stale"})] << 410 << {"kind": "Status"}
        e["get /api/v1/pods"] << {"metadata": {"continue": "stale"}, "items": []}

    cluster.call(react)
    with pytest.raises(LiveReadError, match=r"listing pods: the list expired \(HTTP 410 Gone\) 4"):
        load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))
