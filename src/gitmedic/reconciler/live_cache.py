"""One watch-based cache per cluster, shared by every app a process watches on it.

Without it each app lists every kind at each monitor step: N apps cost N x 19 lists
an interval. With it the process lists each kind once, then keeps it current with a
watch, as client-go's informers do, and an app's snapshot is a view of the shared
store filtered to its namespace: no request at all (but PodMetrics', below).

Design:

- **Streams.** A :class:`_Stream` per watched kind (:data:`WATCHED`: the namespaced
  kinds of :data:`~gitmedic.reconciler.live.LIST_CALLS`), in its own daemon thread:
  list (paged, one revision), then watch from the list's ``resourceVersion``, applying
  ``ADDED``/``MODIFIED`` (put), ``DELETED`` (drop) and ``BOOKMARK`` (the revision only).
  A watch the server ends cleanly (its ``timeoutSeconds``) is resumed from the last
  revision seen, with no list: nothing is lost between the two. Only the namespaces of
  the cache's apps are kept.
- **Scope.** A kind is listed and watched across all namespaces (one stream, what a
  ClusterRole grants). When that is refused (403: the chart's ``rbac.scope:
  namespaces``, a Role per namespace), the kind falls back to one stream per namespace.
  (A thread per stream: 19 with a ClusterRole, 19 per namespace with Roles; for many
  apps the ClusterRole mode is the one that scales.)
- **410 Gone.** The watch's revision compacted away (the HTTP status, or an ``ERROR``
  event with code 410) makes the stream list again and restart the watch from the new
  list. Any other failure (the stream breaks, the server errs, a 403) does the same
  after a backoff (1 s doubling to 30 s).
- **Fail closed.** A stream's store is *synced* from the end of a list until the stream
  fails: while a kind has never been listed, or its watch broke and it has not been
  listed again, a snapshot needing that kind raises
  :class:`~gitmedic.reconciler.live.LiveReadError` naming the kind and why; it never
  reads as "no objects". Kinds the live reader may rightly skip are skipped as it does:
  a non-core group the cluster does not serve (404), an optional kind RBAC refuses
  (Secrets without ``rbac.readSecrets``; returned as a :class:`ListDenied`).
- **Polled kinds.** PodMetrics (``metrics.k8s.io``) is served by an aggregated API that
  has no watch: it is listed across namespaces when a snapshot needs it and the last
  list is older than ``poll_s`` (half the monitor interval: one list per step for all
  apps), per namespace at each snapshot when that is refused; a failure raises, as the
  list reader's does.
- **Threads.** :meth:`LiveCache.stop` sets the stop flag and closes the transport's open
  streams, which ends every thread's blocking read at once; threads are joined.
- **Secrets' values** never enter the store: they are watched as metadata, like their
  list, and :func:`~gitmedic.reconciler.live.obj_of` keeps metadata only. Every object is
  registered for redaction as it enters the store, before any snapshot shows it.

The cache is for a process that keeps watching (``serve``, ``run`` without
``--once``); one-shot readers (``detect --live``, ``run --once``) keep plain lists.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.reconciler.live import (
    LIST_CALLS,
    ListCall,
    ListDenied,
    Listed,
    LiveReadError,
    obj_of,
)
from gitmedic.reconciler.live_watch import KubeTransport, WatchGone
from gitmedic.reconciler.redact import register_objects

log = logging.getLogger(__name__)

POLLED_GROUPS = ("metrics.k8s.io/",)  # aggregated APIs that serve lists but no watch
WATCHED = tuple(
    c for c in LIST_CALLS if not c.cluster_scoped and not c.api_version.startswith(POLLED_GROUPS)
)
POLLED = tuple(c for c in LIST_CALLS if c.api_version.startswith(POLLED_GROUPS))
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
FIRST_READ_WAIT_S = 60.0  # how long a snapshot waits for the first lists of its kinds


class Transport(Protocol):
    """List and watch one kind (the real one: :class:`KubeTransport`; tests fake it)."""

    def list(self, call: ListCall, namespace: str | None) -> Listed | None: ...

    def watch(
        self, call: ListCall, namespace: str | None, version: str
    ) -> Iterator[Mapping[str, Any]]: ...

    def close(self) -> None: ...


@dataclass
class _State:
    """What a stream knows, under its lock."""

    synced: bool = False
    settled: bool = False  # the first list ended (synced, refused, absent or failed)
    absent: bool = False  # the cluster does not serve the kind's group (404)
    denied: ListDenied | None = None
    error: str = "not listed yet"
    objects: dict[str, dict[str, Obj]] = field(default_factory=dict)  # namespace -> name -> obj
    version: str = ""
    lists: int = 0
    watches: int = 0


class _Replaced(Exception):
    """The stream was handed to per-namespace streams while a reader waited on it."""


class _Stream:
    def __init__(self, cache: LiveCache, call: ListCall, namespace: str | None) -> None:
        self.cache, self.call, self.namespace = cache, call, namespace
        self.state = _State()
        self.replaced = False
        self.lock = threading.Condition()
        where = namespace or "all namespaces"
        self.thread = threading.Thread(
            target=self._run, name=f"gitmedic-watch-{call.plural}-{where}", daemon=True
        )

    def _run(self) -> None:
        failures = 0
        relist = True
        while not self.cache.stopping.is_set():
            try:
                if relist:
                    listed = self._list()
                    if listed == "handed":  # to per-namespace streams
                        return
                    if listed == "absent":  # look again later: the group may be installed
                        self.cache.stopping.wait(self.cache.backoff_s[-1])
                        continue
                    relist = False
                self._watch()
                failures = 0  # a clean end: resumed from the last revision
            except WatchGone as gone:
                self._broken(str(gone))
                relist = True
                failures += 1
                if failures > 1:  # gone again straight after a fresh list: not a hot loop
                    self._backoff(failures - 1)
            except LiveReadError as exc:
                if self.cache.stopping.is_set():
                    return
                self._broken(str(exc), denied=exc if isinstance(exc, ListDenied) else None)
                relist = True
                failures += 1
                self._backoff(failures)

    def _list(self) -> str:
        """List the kind into the store: "listed", "absent" (the group is not served) or
        "handed" (refused across namespaces: per-namespace streams took it)."""
        try:
            listed = self.cache.transport.list(self.call, self.namespace)
        except ListDenied:
            if self.namespace is None and self.cache.fall_back(self.call):
                return "handed"
            raise
        with self.lock:
            state = self.state
            state.lists += 1
            state.denied = None
            if listed is None:
                state.absent, state.synced, state.objects = True, False, {}
                state.error = "the cluster does not serve it"
            else:
                state.absent, state.synced, state.error = False, True, ""
                state.objects = self.cache.grouped(self.call, listed.items)
                state.version = listed.resource_version
            state.settled = True
            self.lock.notify_all()
        return "absent" if listed is None else "listed"

    def _watch(self) -> None:
        with self.lock:
            version = self.state.version
            self.state.watches += 1
        for event in self.cache.transport.watch(self.call, self.namespace, version):
            if self.cache.stopping.is_set():
                return
            self._apply(event)

    def _apply(self, event: Mapping[str, Any]) -> None:
        kind, item = event.get("type"), event.get("object")
        if not isinstance(item, Mapping):
            raise LiveReadError(f"watching {self.call.plural}: a {kind} event without an object")
        meta = item.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        version = str(meta.get("resourceVersion") or "")
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        keep = kind in ("ADDED", "MODIFIED") and self.cache.wants(ns)
        obj = obj_of(item, self.call) if keep else None
        if obj is not None:
            register_objects([obj.body])  # before any snapshot shows it
        with self.lock:
            objects = self.state.objects
            if kind == "DELETED" or (obj is None and kind in ("ADDED", "MODIFIED")):
                objects.get(ns, {}).pop(name, None)
            elif obj is not None:
                objects.setdefault(ns, {})[name] = obj
            elif kind != "BOOKMARK":
                raise LiveReadError(f"watching {self.call.plural}: unknown event type {kind!r}")
            if version:
                self.state.version = version

    def _broken(self, why: str, denied: ListDenied | None = None) -> None:
        with self.lock:
            if self.state.synced:
                log.warning("%s: the watch broke (%s); listing it again", self.call.plural, why)
            self.state.synced, self.state.error, self.state.denied = False, why, denied
            self.state.settled = True
            self.lock.notify_all()

    def _backoff(self, failures: int) -> None:
        delays = self.cache.backoff_s
        self.cache.stopping.wait(delays[min(failures, len(delays)) - 1] if delays else 0.0)

    def view(self, namespace: str, wait_s: float) -> tuple[list[Obj], ListDenied | None]:
        """This kind's objects in ``namespace``; its refusal if optional and refused."""
        with self.lock:
            self.lock.wait_for(lambda: self.state.settled or self.replaced, timeout=wait_s)
            if self.replaced:
                raise _Replaced
            state = self.state
            if state.absent:
                return [], None
            if state.denied is not None and self.call.optional:
                return [], state.denied
            if not state.synced:
                if state.denied is not None:
                    raise state.denied
                raise LiveReadError(f"{self.call.plural} cannot be read now: {state.error}")
            found = state.objects.get(namespace, {})
            return [found[name] for name in sorted(found)], None


class _Poll:
    """A kind with no watch: one list across namespaces serves every read for ``every_s``."""

    def __init__(self, cache: LiveCache, call: ListCall) -> None:
        self.cache, self.call = cache, call
        self.lock = threading.Lock()
        self.at: float | None = None
        self.objects: dict[str, dict[str, Obj]] | None = None  # None: not served
        self.per_namespace = cache.poll_s <= 0

    def view(self, namespace: str) -> tuple[list[Obj], ListDenied | None]:
        with self.lock:
            now = self.cache.clock()
            if not self.per_namespace and (self.at is None or now - self.at >= self.cache.poll_s):
                try:
                    listed = self.cache.transport.list(self.call, None)
                except ListDenied:
                    self.per_namespace = True
                else:
                    self.at = now
                    self.objects = (
                        None if listed is None else self.cache.grouped(self.call, listed.items)
                    )
            if not self.per_namespace:
                found = (self.objects or {}).get(namespace, {})
                return [found[name] for name in sorted(found)], None
        try:
            listed = self.cache.transport.list(self.call, namespace)
        except ListDenied as refused:
            if not self.call.optional:
                raise
            return [], refused
        if listed is None:
            return [], None
        found = self.cache.grouped(self.call, listed.items).get(namespace, {})
        return [found[name] for name in sorted(found)], None


class LiveCache:
    """The shared store of one cluster: start it, read views of it, stop it."""

    def __init__(
        self,
        transport: Transport,
        namespaces: Iterable[str],
        *,
        calls: Iterable[ListCall] = WATCHED,
        polled: Iterable[ListCall] = POLLED,
        backoff_s: tuple[float, ...] = BACKOFF_S,
        first_read_wait_s: float = FIRST_READ_WAIT_S,
        poll_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transport = transport
        self.namespaces = frozenset(namespaces)
        self.calls, self.polled = tuple(calls), tuple(polled)
        self.backoff_s, self.first_read_wait_s = backoff_s, first_read_wait_s
        self.poll_s, self.clock = poll_s, clock
        self._polls = [_Poll(self, c) for c in self.polled]
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._streams: dict[tuple[str, str | None], _Stream] = {
            (c.kind, None): _Stream(self, c, None) for c in self.calls
        }
        self._started = False

    def start(self) -> LiveCache:
        with self._lock:
            if not self._started:
                self._started = True
                for stream in self._streams.values():
                    stream.thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        self.transport.close()
        with self._lock:
            streams = list(self._streams.values())
        for stream in streams:
            if stream.thread.is_alive():
                stream.thread.join(timeout)

    def wants(self, namespace: str) -> bool:
        return namespace in self.namespaces

    def grouped(
        self, call: ListCall, items: Iterable[Mapping[str, Any]]
    ) -> dict[str, dict[str, Obj]]:
        objects: dict[str, dict[str, Obj]] = {}
        kept = [o for o in (obj_of(item, call) for item in items) if self.wants(o.namespace)]
        register_objects(o.body for o in kept)  # before any snapshot shows them
        for obj in kept:
            objects.setdefault(obj.namespace, {})[obj.name] = obj
        return objects

    def fall_back(self, call: ListCall) -> bool:
        """The kind across all namespaces is refused: a stream per namespace instead."""
        with self._lock:
            if self.stopping.is_set() or not self.namespaces:
                return False
            log.info("%s: not readable in all namespaces; watched per namespace", call.plural)
            streams = [_Stream(self, call, ns) for ns in sorted(self.namespaces)]
            for stream in streams:
                self._streams[(call.kind, stream.namespace)] = stream
                stream.thread.start()
            whole = self._streams.pop((call.kind, None))
        with whole.lock:  # readers waiting on the whole stream look again
            whole.replaced = True
            whole.lock.notify_all()
        return True

    def _stream(self, call: ListCall, namespace: str) -> _Stream:
        with self._lock:
            return self._streams.get((call.kind, None)) or self._streams[(call.kind, namespace)]

    def read(
        self, namespace: str, *, taken_at: str = ""
    ) -> tuple[Snapshot, tuple[ListDenied, ...]]:
        """The namespace's snapshot from the store and the polled kinds: as
        :func:`~gitmedic.reconciler.live.read_live` returns it, or :class:`LiveReadError`
        when a kind it needs is not synced."""
        if namespace not in self.namespaces:
            raise LiveReadError(f"namespace {namespace!r} is not one this cache watches")
        if not self._started or self.stopping.is_set():
            raise LiveReadError("the cluster's cache is not running")
        objects: list[Obj] = []
        denied: list[ListDenied] = []
        for call in self.calls:
            try:
                found, refused = self._stream(call, namespace).view(
                    namespace, self.first_read_wait_s
                )
            except _Replaced:  # it fell back to per-namespace streams meanwhile
                found, refused = self._stream(call, namespace).view(
                    namespace, self.first_read_wait_s
                )
            objects.extend(found)
            if refused is not None:
                denied.append(refused)
        for poll in self._polls:
            found, refused = poll.view(namespace)
            objects.extend(found)
            if refused is not None:
                denied.append(refused)
        return Snapshot(objects, mode=Mode.LIVE, taken_at=taken_at), tuple(denied)

    def counts(self) -> dict[str, int]:
        """Lists and watches made so far (the bench reads them)."""
        with self._lock:
            streams = list(self._streams.values())
        return {
            "lists": sum(s.state.lists for s in streams),
            "watches": sum(s.state.watches for s in streams),
        }


def kube_cache(api: Any, namespaces: Iterable[str], *, interval_s: float) -> LiveCache:
    """A started cache over a real cluster for apps stepped every ``interval_s``; ``api``
    is its own ``ApiClient``, whose pool has room for a connection per stream (all kinds,
    and per namespace if it falls back)."""
    namespaces = frozenset(namespaces)
    streams = len(WATCHED) * (1 + len(namespaces))
    transport = KubeTransport(api, streams=streams)
    return LiveCache(transport, namespaces, poll_s=interval_s / 2).start()
