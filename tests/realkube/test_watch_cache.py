"""The shared watch cache (gitmedic.reconciler.live_cache) against the real API server.

Only etcd and kube-apiserver run (module-scoped), as in test_shard_leases: watches need
nothing else. Objects made, changed and deleted with the plane's kubectl show in the
cache's view of their namespace, never in another's. A 410 Gone is forced for real:
LimitRanges have no watch cache on this plane (``UNCACHED_PLURAL``), so their watch is
served from etcd; the cache's first LimitRange watch is held back while an object is
added and etcd is compacted past the list's revision, and when it goes out, the server
answers that revision is gone: the cache lists the kind again and sees the new object.
"""

from __future__ import annotations

import signal
import ssl
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.live import ListCall, LiveReadError, connect
from gitmedic.reconciler.live_cache import WATCHED, LiveCache
from gitmedic.reconciler.live_watch import KubeTransport
from gitmedic.sim.faults.git import commit_all
from tests.bot.test_run_every_app import WEB, repo_of
from tests.realkube.bot_identity import install_bot
from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import UNCACHED_PLURAL, ControlPlane, start_api_server
from tests.realkube.processes import Processes, free_port, stop_recorded
from tests.realkube.test_live_list import etcd_compact, limit_range
from tests.realkube.tools import find_tools
from tests.support.step_marks import marking_env, stepped_within

pytestmark = REALKUBE
SHOP, CART = "shop", "cart"
FOLLOW_S = 30.0  # how long a change may take to show (a bound, not a measurement)


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    tools = find_tools()
    if isinstance(tools, str):
        pytest.skip(f"realkube tier skipped: {tools}")
    folder = tmp_path_factory.mktemp("watch-plane")
    try:
        running = start_api_server(tools, folder, Processes(folder))
        running.apply(
            [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
                for n in (SHOP, CART)
            ]
        )
        yield running
    finally:
        stop_recorded(folder)


class HeldTransport(KubeTransport):
    """The real transport, whose first LimitRange watch waits for the test's go."""

    def __init__(self, api: Any) -> None:
        super().__init__(api, streams=len(WATCHED) * 3)
        self.go = threading.Event()
        self.held = threading.Event()
        self.versions: list[str] = []

    def watch(self, call: ListCall, namespace: str | None, version: str) -> Iterator[Any]:
        if call.plural == UNCACHED_PLURAL:
            self.versions.append(version)
            if len(self.versions) == 1:
                self.held.set()
                self.go.wait(60)
        return super().watch(call, namespace, version)


@pytest.fixture(scope="module")
def cache(plane: ControlPlane) -> Iterator[tuple[LiveCache, HeldTransport]]:
    transport = HeldTransport(connect(kubeconfig=str(plane.kubeconfig)))
    running = LiveCache(transport, {SHOP, CART}).start()
    try:
        yield running, transport
    finally:
        transport.go.set()
        running.stop()
        assert not any(t.name.startswith("gitmedic-watch") for t in threading.enumerate())


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + FOLLOW_S
    while not check():
        assert time.monotonic() < deadline, f"not within {FOLLOW_S} s: {what}"
        time.sleep(0.1)


def seen(cache: LiveCache, namespace: str, kind: str) -> dict[str, Mapping[str, Any]]:
    snapshot, _ = cache.read(namespace)
    return {o.name: o.body for o in snapshot.of_kind(kind)}


def test_the_cache_follows_what_kubectl_creates_changes_and_deletes(
    plane: ControlPlane, cache: tuple[LiveCache, HeldTransport]
) -> None:
    live, _ = cache
    plane.kubectl("-n", SHOP, "create", "configmap", "web", "--from-literal=colour=red")
    eventually(lambda: "web" in seen(live, SHOP, "ConfigMap"), "the new ConfigMap")
    assert "web" not in seen(live, CART, "ConfigMap"), "another namespace's view"

    plane.kubectl("-n", SHOP, "patch", "configmap", "web", "-p", '{"data":{"colour":"blue"}}')
    eventually(
        lambda: seen(live, SHOP, "ConfigMap")["web"].get("data") == {"colour": "blue"},
        "the changed ConfigMap",
    )

    plane.kubectl("-n", SHOP, "create", "secret", "generic", "db", "--from-literal=pw=hunter2")
    eventually(lambda: "db" in seen(live, SHOP, "Secret"), "the new Secret")
    assert "data" not in seen(live, SHOP, "Secret")["db"], "a Secret is metadata only"

    plane.kubectl("-n", SHOP, "delete", "configmap", "web")
    eventually(lambda: "web" not in seen(live, SHOP, "ConfigMap"), "the deleted ConfigMap")
    counts = live.counts()
    assert counts["lists"] == len(WATCHED), f"one list per kind, none per read: {counts}"


def test_a_watch_from_a_compacted_revision_is_410_and_the_kind_is_listed_again(
    plane: ControlPlane, cache: tuple[LiveCache, HeldTransport], caplog: pytest.LogCaptureFixture
) -> None:
    live, transport = cache
    assert transport.held.wait(FOLLOW_S), "the first LimitRange watch"
    (stream,) = [s for s in live._streams.values() if s.call.plural == UNCACHED_PLURAL]
    assert stream.state.lists == 1 and seen(live, CART, "LimitRange") == {}

    plane.apply([limit_range("lr-late", CART)])
    # and one more write: etcd keeps the compaction's own revision, so a watch from just
    # before it would still be served
    plane.kubectl("-n", CART, "create", "configmap", "bump")
    etcd_compact(plane.etcd)
    transport.go.set()

    eventually(lambda: stream.state.lists == 2, "a second LimitRange list after the 410")
    eventually(lambda: "lr-late" in _readable(live, CART), "lr-late, from the new list")
    broke = [r.getMessage() for r in caplog.records if "watch broke" in r.getMessage()]
    assert any(m.startswith(f"{UNCACHED_PLURAL}: the watch broke") for m in broke), broke
    first, *later = transport.versions
    assert later and later[0] != first, (
        f"the watch restarted from the new list: {transport.versions}"
    )


def _readable(live: LiveCache, namespace: str) -> dict[str, Mapping[str, Any]]:
    try:
        return seen(live, namespace, "LimitRange")
    except LiveReadError:  # between the 410 and the new list: unreadable, never empty
        return {}


def test_a_cache_that_cannot_reach_the_server_reads_as_an_error_naming_it(
    tmp_path: Path,
) -> None:
    transport = KubeTransport(connect(kubeconfig=str(_unreachable(tmp_path))))
    live = LiveCache(transport, {SHOP}, backoff_s=(0.2,), first_read_wait_s=FOLLOW_S).start()
    try:
        with pytest.raises(LiveReadError, match="cannot be read now: listing pods: cannot reach"):
            live.read(SHOP)
    finally:
        live.stop()


def _unreachable(folder: Path) -> Path:
    config = folder / "nowhere.kubeconfig"
    port = free_port()
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        f"clusters: [{{name: x, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: x, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: x, user: x}}]\n"
    )
    return config


SERVED = [f"web-{i}" for i in range(3)]


def apiserver_requests(plane: ControlPlane, verb: str, resource: str) -> float:
    """The API server's own count of ``verb`` requests on ``resource`` (its /metrics)."""
    request = urllib.request.Request(
        f"{plane.server}/metrics", headers={"Authorization": f"Bearer {plane.pki.tokens['admin']}"}
    )
    context = ssl.create_default_context(cafile=str(plane.pki.ca))
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        wanted = (f'verb="{verb}"', f'resource="{resource}"')
        if line.startswith("apiserver_request_total{") and all(w in line for w in wanted):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.parametrize("command", ["serve", "run"])
def test_the_apps_on_one_cluster_read_it_through_one_watch_per_kind_not_lists_per_step(
    plane: ControlPlane, tmp_path: Path, command: str
) -> None:
    """``gitmedic serve --cluster kube`` (and ``run`` without ``--once``) with three
    apps: once the cache has listed each kind, the steps of all three read it with no
    LIST at all (the API server's count), where they listed every kind per app per step
    before; interrupted, the process ends (its watches stopped)."""
    plane.apply(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in SERVED]
    )
    argo = f"http://127.0.0.1:{free_port()}"  # no Argo CD: the monitor needs none
    repo = repo_of(
        tmp_path, SERVED, lambda d, n: (d / "web.yaml").write_text(WEB.format(ns=n, minor=0))
    )
    engine = f"engine: {{kind: argocd, url: '{argo}', token_env: ARGO_TOKEN}}"
    apps = "".join(f"  - {{name: {n}, path: apps/{n}, namespace: {n}, {engine}}}\n" for n in SERVED)
    (repo / ".gitmedic" / "config.yaml").write_text(f"version: 1\napps:\n{apps}")
    commit_all(repo, "apps on a real cluster")
    state, procs = tmp_path / "state", Processes(tmp_path / command)
    common = ["--forge", "local", "--cluster", "kube", "--interval", "1"]
    if command == "serve":
        argv = ["serve", *common, "--repo", str(repo), "--state-dir", str(state)]
        argv += ["--port", str(free_port()), "--log-level", "info"]
    else:
        argv = ["run", str(repo), *common]
    env = {"KUBECONFIG": str(plane.kubeconfig), "ARGO_TOKEN": "t", "GITMEDIC_WEBHOOK_SECRET": "s"}
    marks = tmp_path / "steps"  # a mark per step each app is acted on in (test hook)
    env |= marking_env(marks)
    env["KUBERNETES_SERVICE_HOST"] = ""
    process = procs.start(command, [sys.executable, "-m", "gitmedic", *argv], env)
    try:
        eventually(lambda: all(stepped_within(marks, a, 3.0) for a in SERVED), "every app stepping")
        lists = apiserver_requests(plane, "LIST", "configmaps")
        time.sleep(5.0)  # five more steps of each app
        assert process.poll() is None, procs.tail(command)
        assert all(stepped_within(marks, a, 3.0) for a in SERVED), procs.tail(command)
        assert apiserver_requests(plane, "LIST", "configmaps") == lists, "a list per step"
        assert apiserver_requests(plane, "WATCH", "configmaps") >= 1
    finally:
        process.send_signal(signal.SIGINT if command == "run" else signal.SIGTERM)
        exited = process.wait(30)
    log = procs.log(command).read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert "monitor step failed" not in log and "cannot be read now" not in log, log[-3000:]
    assert exited in (0, 1), log[-3000:]


@pytest.mark.parametrize(
    ("scope", "whole"),
    [
        (("rbac.scope=cluster",), True),
        (("rbac.scope=namespaces", "rbac.namespaces={shop,cart}"), False),
    ],
    ids=["clusterrole", "role-per-namespace"],
)
def test_the_chart_s_identity_can_list_and_watch_every_kind_either_rbac_scope(
    plane: ControlPlane, tmp_path: Path, scope: tuple[str, ...], whole: bool
) -> None:
    """The chart's RBAC grants the watch: with its ClusterRole one stream per kind
    across namespaces; with a Role per namespace each kind falls back to a stream per
    namespace. Secrets, not granted (``rbac.readSecrets`` off), are said refused."""
    bot = f"bot-{'c' if whole else 'n'}"
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": bot}}])
    config = install_bot(plane, bot, tmp_path, read_secrets=False, extra=scope)
    plane.kubectl("-n", CART, "create", "configmap", f"seen-by-{bot}")
    transport = KubeTransport(connect(kubeconfig=str(config)), streams=len(WATCHED) * 3)
    live = LiveCache(transport, {SHOP, CART}).start()
    try:
        snapshot, denied = live.read(CART)
        assert f"seen-by-{bot}" in {o.name for o in snapshot.of_kind("ConfigMap")}
        assert [d.kind for d in denied] == ["Secret"]
        spread = {(s.call.kind, s.namespace) for s in live._streams.values()}
        if whole:
            assert spread == {(c.kind, None) for c in WATCHED if c.kind != "Secret"} | {
                ("Secret", SHOP),
                ("Secret", CART),
            }
        else:
            assert spread == {(c.kind, ns) for c in WATCHED for ns in (SHOP, CART)}
        plane.kubectl("-n", CART, "create", "configmap", f"later-{bot}")
        eventually(lambda: f"later-{bot}" in seen(live, CART, "ConfigMap"), "a watched change")
    finally:
        live.stop()
