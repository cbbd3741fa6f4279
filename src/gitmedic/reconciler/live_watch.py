"""The watch call of the live reader: ``GET ...?watch=1`` on one kind, as a stream of events.

Spoken as :mod:`gitmedic.reconciler.live` speaks lists: the request is built with
``ApiClient.param_serialize`` and sent with ``call_api``, whose urllib3 response is not
preloaded, so its body is read line by line (one JSON event a line) as the API server
sends it. The watch starts from a list's ``resourceVersion``, asks for bookmarks (the
revision moves on while nothing changes, so a resumed watch is rarely too old) and for a
server-side end after ``timeoutSeconds``; the read timeout is a little longer, so a
connection that died silently is noticed within it.

A watch from a revision etcd has compacted away is answered 410 Gone, either as the
HTTP status or (the usual way) as an ``ERROR`` event whose ``Status`` has code 410:
both are :class:`WatchGone`, on which the caller lists again. Anything else that is not a
stream of events (a 403, a 5xx, a connection that breaks mid-stream) is
:class:`~gitmedic.reconciler.live.LiveReadError`. Secrets are watched as metadata only
(``PartialObjectMetadata``), as they are listed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from gitmedic.reconciler.live import (
    REQUEST_TIMEOUT_S,
    ListCall,
    ListDenied,
    Listed,
    LiveReadError,
    first_line,
    list_kind,
    status_message,
)

WATCH_TIMEOUT_S = 240  # the server ends each watch after this; it is resumed at once
READ_MARGIN_S = 30.0
_JSON = "application/json"
_PARTIAL_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
GONE = 410


class WatchGone(Exception):
    """The watch's revision is compacted away (410 Gone): list again."""


Event = Mapping[str, Any]  # {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}


class KubeTransport:
    """Lists and watches over one ``ApiClient``; :meth:`close` ends every open watch."""

    def __init__(
        self, api: Any, *, watch_timeout_s: int = WATCH_TIMEOUT_S, streams: int = 0
    ) -> None:
        self.api = api
        if streams:  # each open watch holds a connection: a pool with room for them all
            pool = api.rest_client.pool_manager
            pool.connection_pool_kw["maxsize"] = max(
                streams, pool.connection_pool_kw.get("maxsize") or 0
            )
        self.watch_timeout_s = watch_timeout_s
        self._open: set[Any] = set()
        self._lock = threading.Lock()
        self._closed = False

    def list(self, call: ListCall, namespace: str | None) -> Listed | None:
        return list_kind(self.api, call, namespace)

    def watch(self, call: ListCall, namespace: str | None, version: str) -> Iterator[Event]:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        query: list[tuple[str, object]] = [
            ("watch", "1"),
            ("resourceVersion", version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", self.watch_timeout_s),
        ]
        accept = _PARTIAL_METADATA if call.metadata_only else _JSON
        path = call.path(namespace)
        method, url, headers, _, _ = self.api.param_serialize(
            "GET",
            path,
            query_params=query,
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
        )
        timeout = (REQUEST_TIMEOUT_S, self.watch_timeout_s + READ_MARGIN_S)
        try:
            response = self.api.call_api(
                method, url, header_params=headers, _request_timeout=timeout
            )
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise LiveReadError(f"watching {call.plural}: {first_line(exc)}") from None
        raw = response.response
        status = int(response.status)
        if status == GONE:
            raw.release_conn()
            raise WatchGone(f"watching {call.plural}: HTTP 410 Gone")
        if not 200 <= status < 300:
            body = bytes(raw.read() or b"")
            raw.release_conn()
            message = f"watching {call.plural} ({path}): HTTP {status} {status_message(body)}"
            raise ListDenied(message, call.kind) if status == 403 else LiveReadError(message)
        return self._events(call, raw)

    def _events(self, call: ListCall, raw: Any) -> Iterator[Event]:
        import urllib3

        with self._lock:
            if self._closed:
                raw.close()
                return
            self._open.add(raw)
        try:
            for line in raw:
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    raise LiveReadError(f"watching {call.plural}: an event is not JSON") from None
                if not isinstance(event, Mapping):
                    raise LiveReadError(f"watching {call.plural}: an event is not an object")
                if event.get("type") == "ERROR":
                    _raise_error(call, event.get("object"))
                yield event
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            if self._closed:
                return
            raise LiveReadError(
                f"watching {call.plural}: the stream broke: {first_line(exc)}"
            ) from None
        finally:
            with self._lock:
                self._open.discard(raw)
            raw.close()

    def close(self) -> None:
        """Unblock every watch reading now (their threads see the stream end)."""
        with self._lock:
            self._closed = True
            streams = list(self._open)
        for raw in streams:
            try:
                raw.shutdown()
            except (OSError, AttributeError):  # already gone, or an urllib3 without it
                raw.close()


def _raise_error(call: ListCall, status: object) -> None:
    code = status.get("code") if isinstance(status, Mapping) else None
    message = status.get("message") if isinstance(status, Mapping) else None
    if code == GONE:
        raise WatchGone(f"watching {call.plural}: {message or '410 Gone'}")
    raise LiveReadError(f"watching {call.plural}: the server sent an error ({code}: {message})")
