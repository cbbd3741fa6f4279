"""The shared watch cache (gitmedic.reconciler.live_cache) over a scripted transport.

The fake transport hands out what each test scripts, in order, per (kind, namespace):
lists (a Listed, None for "not served", or an error) and watch events (an event, an
error raised mid-stream, END for a clean end). An empty script blocks, as a quiet
watch does, so every step is the test's: a ``sync`` marker returns once the stream
asked for the event after it, i.e. applied every event before it.
"""

from __future__ import annotations

import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from gitmedic.reconciler.live import ListCall, ListDenied, Listed, LiveReadError
from gitmedic.reconciler.live_cache import WATCHED, LiveCache
from gitmedic.reconciler.live_watch import WatchGone

CM = ListCall("v1", "ConfigMap", "configmaps")
SECRET = ListCall("v1", "Secret", "secrets", metadata_only=True, optional=True)
HPA = ListCall("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers")
END = object()
WAIT_S = 10.0  # a bound for a thread to answer, never a measured duration

Key = tuple[str, str | None]


class Sync:
    def __init__(self) -> None:
        self.done = threading.Event()


class FakeTransport:
    def __init__(self) -> None:
        self.lists: defaultdict[Key, queue.Queue[Any]] = defaultdict(queue.Queue)
        self.events: defaultdict[Key, queue.Queue[Any]] = defaultdict(queue.Queue)
        self.calls: list[tuple[str, ...]] = []
        self.cond = threading.Condition()
        self.closed = threading.Event()

    def _take(self, box: queue.Queue[Any]) -> Any:
        while not self.closed.is_set():
            try:
                return box.get(timeout=0.02)
            except queue.Empty:
                continue
        raise LiveReadError("the transport is closed")

    def _called(self, *call: str) -> None:
        with self.cond:
            self.calls.append(call)
            self.cond.notify_all()

    def list(self, call: ListCall, namespace: str | None) -> Listed | None:
        self._called("list", call.kind, namespace or "*")
        answer = self._take(self.lists[(call.kind, namespace)])
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    def watch(
        self, call: ListCall, namespace: str | None, version: str
    ) -> Iterator[Mapping[str, Any]]:
        self._called("watch", call.kind, namespace or "*", version)
        return self._stream((call.kind, namespace))

    def _stream(self, key: Key) -> Iterator[Mapping[str, Any]]:
        while True:
            item = self._take(self.events[key])
            if item is END:
                return
            if isinstance(item, Sync):
                item.done.set()
                continue
            if isinstance(item, Exception):
                raise item
            yield item

    def close(self) -> None:
        self.closed.set()

    # -- the test's side ------------------------------------------------------------
    def listed(self, kind: str, version: str, *items: dict[str, Any], ns: str | None = None):
        self.lists[(kind, ns)].put(Listed(list(items), version))

    def send(self, kind: str, *events: Any, ns: str | None = None) -> None:
        for event in events:
            self.events[(kind, ns)].put(event)

    def sync(self, kind: str, ns: str | None = None) -> None:
        marker = Sync()
        self.events[(kind, ns)].put(marker)
        assert marker.done.wait(WAIT_S), f"the {kind} stream did not take its events"

    def wait_for(self, check: Callable[[list[tuple[str, ...]]], bool]) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: check(self.calls), WAIT_S), self.calls


def cm(name: str, ns: str = "shop", rv: str = "1", **data: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": ns, "resourceVersion": rv}
    return {"metadata": meta, "data": data}


def event(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "object": obj}


def names(cache: LiveCache, ns: str = "shop", kind: str = "ConfigMap") -> list[str]:
    snapshot, _ = cache.read(ns)
    return [o.name for o in snapshot.of_kind(kind)]


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def make(fake: FakeTransport) -> Iterator[Callable[..., LiveCache]]:
    made: list[LiveCache] = []

    def build(*calls: ListCall, namespaces: tuple[str, ...] = ("shop",), wait: float = WAIT_S):
        cache = LiveCache(
            fake, namespaces, calls=calls or (CM,), polled=(), backoff_s=(0.0,),
            first_read_wait_s=wait,
        )  # fmt: skip
        made.append(cache.start())
        return cache

    yield build
    for cache in made:
        cache.stop()
        assert not any(s.thread.is_alive() for s in cache._streams.values()), "threads left"


def test_the_cache_follows_added_modified_and_deleted_in_the_apps_namespace_only(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    cache = make()
    fake.listed("ConfigMap", "10", cm("a"), cm("other", ns="elsewhere"))
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "10") in calls)
    assert names(cache) == ["a"]

    fake.send("ConfigMap", event("ADDED", cm("b", rv="11")))
    fake.send("ConfigMap", event("MODIFIED", cm("a", rv="12", colour="blue")))
    fake.send("ConfigMap", event("ADDED", cm("far", ns="elsewhere", rv="13")))
    fake.sync("ConfigMap")
    snapshot, denied = cache.read("shop")
    assert [o.name for o in snapshot.of_kind("ConfigMap")] == ["a", "b"] and denied == ()
    assert snapshot.get("ConfigMap", "shop", "a").body["data"] == {"colour": "blue"}
    assert snapshot.get("ConfigMap", "shop", "a").body["kind"] == "ConfigMap"
    assert all(len(s.state.objects.get("elsewhere", {})) == 0 for s in cache._streams.values())

    fake.send("ConfigMap", event("DELETED", cm("a", rv="14")))
    fake.sync("ConfigMap")
    assert names(cache) == ["b"]


def test_a_kind_never_listed_is_unreadable_never_empty(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    cache = make(wait=0.0)
    with pytest.raises(LiveReadError, match="configmaps cannot be read now: not listed yet"):
        cache.read("shop")
    fake.listed("ConfigMap", "1")
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "1") in calls)
    assert names(cache) == []  # now "no objects" is what the cluster said


@pytest.mark.parametrize(
    "gone",
    [
        WatchGone("watching configmaps: too old resource version: 5 (20)"),  # ERROR 410
        LiveReadError("watching configmaps: the stream broke: connection reset"),
    ],
    ids=["410-gone", "stream-broke"],
)
def test_a_broken_watch_fails_closed_until_listed_again_and_resumes_from_the_new_list(
    fake: FakeTransport, make: Callable[..., LiveCache], gone: Exception
) -> None:
    cache = make(wait=0.0)
    fake.listed("ConfigMap", "5", cm("a"))
    fake.send("ConfigMap", event("ADDED", cm("b", rv="6")))
    fake.sync("ConfigMap")
    assert names(cache) == ["a", "b"]

    fake.send("ConfigMap", gone)
    fake.wait_for(lambda calls: calls.count(("list", "ConfigMap", "*")) == 2)
    with pytest.raises(LiveReadError, match="configmaps cannot be read now: watching configmaps"):
        cache.read("shop")

    fake.listed("ConfigMap", "20", cm("b", rv="19"), cm("c", rv="18"))  # a deleted meanwhile
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "20") in calls)
    assert names(cache) == ["b", "c"]
    assert [c for c in fake.calls if c[0] == "watch"] == [
        ("watch", "ConfigMap", "*", "5"),
        ("watch", "ConfigMap", "*", "20"),
    ]


def test_a_watch_the_server_ends_is_resumed_from_the_last_revision_without_a_list(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    cache = make()
    fake.listed("ConfigMap", "5", cm("a"))
    fake.send("ConfigMap", event("ADDED", cm("b", rv="7")))
    fake.send("ConfigMap", {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}})
    fake.send("ConfigMap", END)
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "9") in calls)
    assert names(cache) == ["a", "b"]
    assert [c for c in fake.calls if c[0] == "list"] == [("list", "ConfigMap", "*")]


def test_an_error_event_other_than_410_fails_closed_too(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    cache = make(wait=0.0)
    fake.listed("ConfigMap", "5", cm("a"))
    fake.send("ConfigMap", {"type": "UNHEARD", "object": {"metadata": {}}})
    fake.wait_for(lambda calls: calls.count(("list", "ConfigMap", "*")) == 2)
    with pytest.raises(LiveReadError, match="unknown event type 'UNHEARD'"):
        cache.read("shop")


def test_a_kind_refused_across_namespaces_is_watched_per_namespace(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    fake.lists[("ConfigMap", None)].put(ListDenied("listing configmaps: HTTP 403", "ConfigMap"))
    fake.listed("ConfigMap", "3", cm("a"), ns="shop")
    fake.listed("ConfigMap", "4", cm("x", ns="cart"), ns="cart")
    cache = make(namespaces=("shop", "cart"))
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "cart", "4") in calls)
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "shop", "3") in calls)
    assert names(cache, "shop") == ["a"] and names(cache, "cart") == ["x"]
    fake.send("ConfigMap", event("ADDED", cm("y", ns="cart", rv="5")), ns="cart")
    fake.sync("ConfigMap", ns="cart")
    assert names(cache, "cart") == ["x", "y"]


def test_an_optional_kind_refused_is_left_out_and_said_a_required_one_fails(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    for kind in ("Secret", "ConfigMap"):
        for ns in (None, "shop"):
            fake.lists[(kind, ns)].put(ListDenied(f"listing {kind}: HTTP 403", kind))
    cache = make(SECRET, CM)
    fake.wait_for(lambda calls: ("list", "Secret", "shop") in calls)
    with pytest.raises(ListDenied, match="listing ConfigMap: HTTP 403"):
        cache.read("shop")


def test_an_optional_kind_refused_is_returned_as_denied(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    fake.lists[("Secret", None)].put(ListDenied("listing secrets: HTTP 403", "Secret"))
    fake.lists[("Secret", "shop")].put(ListDenied("listing secrets: HTTP 403", "Secret"))
    fake.listed("ConfigMap", "2", cm("a"))
    cache = make(SECRET, CM)
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "2") in calls)
    snapshot, denied = cache.read("shop")
    assert [o.name for o in snapshot] == ["a"]
    assert [d.kind for d in denied] == ["Secret"]


def test_a_group_the_cluster_does_not_serve_is_skipped(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    fake.lists[("HorizontalPodAutoscaler", None)].put(None)
    fake.listed("ConfigMap", "2", cm("a"))
    cache = make(HPA, CM)
    fake.wait_for(lambda calls: ("watch", "ConfigMap", "*", "2") in calls)
    assert [o.name for o in cache.read("shop")[0]] == ["a"]


def test_secrets_enter_the_store_as_metadata_only(
    fake: FakeTransport, make: Callable[..., LiveCache]
) -> None:
    applied = "kubectl.kubernetes.io/last-applied-configuration"
    secret = {
        "metadata": {"name": "db", "namespace": "shop", "annotations": {applied: "{pw}"}},
        "data": {"password": "aHVudGVyMg=="},
    }
    fake.listed("Secret", "2")
    cache = make(SECRET)
    fake.send("Secret", event("ADDED", secret))
    fake.sync("Secret")
    (obj,) = cache.read("shop")[0]
    assert "data" not in obj.body and applied not in obj.body["metadata"]["annotations"]


def test_a_namespace_the_cache_does_not_watch_is_refused(
    make: Callable[..., LiveCache],
) -> None:
    with pytest.raises(LiveReadError, match="'cart' is not one this cache watches"):
        make().read("cart")


def test_the_watched_kinds_are_the_namespaced_listed_kinds_but_metrics() -> None:
    kinds = {c.kind for c in WATCHED}
    assert "Node" not in kinds and "PodMetrics" not in kinds
    assert {"Pod", "Event", "Secret", "Deployment", "Ingress"} <= kinds and len(kinds) == 19


METRICS = ListCall("metrics.k8s.io/v1beta1", "PodMetrics", "pods", optional=True)


def polled_cache(fake: FakeTransport, now: list[float]) -> LiveCache:
    cache = LiveCache(
        fake, ("shop", "cart"), calls=(), polled=(METRICS,), backoff_s=(0.0,),
        first_read_wait_s=WAIT_S, poll_s=30.0, clock=lambda: now[0],
    )  # fmt: skip
    return cache.start()


def test_a_kind_without_watch_is_listed_once_per_poll_for_every_app(fake: FakeTransport) -> None:
    now = [100.0]
    cache = polled_cache(fake, now)
    fake.listed("PodMetrics", "1", cm("web-1"), cm("cart-1", ns="cart"), cm("far", ns="x"))
    assert [o.name for o in cache.read("shop")[0]] == ["web-1"]
    assert [o.name for o in cache.read("cart")[0]] == ["cart-1"]
    assert fake.calls == [("list", "PodMetrics", "*")], "one list for both apps"

    now[0] += 30.0  # the next step
    fake.listed("PodMetrics", "2", cm("web-2"))
    assert [o.name for o in cache.read("shop")[0]] == ["web-2"]
    assert [o.name for o in cache.read("cart")[0]] == []
    assert fake.calls.count(("list", "PodMetrics", "*")) == 2
    cache.stop()


def test_a_kind_without_watch_refused_across_namespaces_is_listed_per_namespace(
    fake: FakeTransport,
) -> None:
    cache = polled_cache(fake, [0.0])
    fake.lists[("PodMetrics", None)].put(ListDenied("listing pods: HTTP 403", "PodMetrics"))
    fake.listed("PodMetrics", "1", cm("web-1"), ns="shop")
    fake.lists[("PodMetrics", "cart")].put(ListDenied("listing pods: HTTP 403", "PodMetrics"))
    assert [o.name for o in cache.read("shop")[0]] == ["web-1"]
    snapshot, denied = cache.read("cart")
    assert len(snapshot) == 0 and [d.kind for d in denied] == ["PodMetrics"]
    cache.stop()


def test_a_kind_without_watch_that_fails_to_list_fails_the_read(fake: FakeTransport) -> None:
    cache = polled_cache(fake, [0.0])
    fake.lists[("PodMetrics", None)].put(LiveReadError("listing pods: HTTP 503"))
    with pytest.raises(LiveReadError, match="HTTP 503"):
        cache.read("shop")
    fake.listed("PodMetrics", "1", cm("web-1"))
    assert [o.name for o in cache.read("shop")[0]] == ["web-1"], "not cached as empty"
    cache.stop()
