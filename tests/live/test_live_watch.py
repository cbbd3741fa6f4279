"""The watch call (gitmedic.reconciler.live_watch) over a stand-in ApiClient: what each
answer of the API server becomes. The real server's are tests/realkube/test_watch_cache's."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from gitmedic.reconciler.live import ListCall, ListDenied, LiveReadError
from gitmedic.reconciler.live_watch import KubeTransport, WatchGone

CM = ListCall("v1", "ConfigMap", "configmaps")
SECRET = ListCall("v1", "Secret", "secrets", metadata_only=True, optional=True)


class Body(io.BytesIO):
    def release_conn(self) -> None:
        pass


class Answer:
    def __init__(self, status: int, lines: list[object]) -> None:
        self.status = status
        text = "".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines)
        self.response = Body(text.encode())


class Api:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asked: list[tuple[str, list[tuple[str, object]], dict[str, str]]] = []

    def param_serialize(self, method: str, path: str, **kw: Any) -> tuple[Any, ...]:
        self.asked.append((path, kw["query_params"], kw["header_params"]))
        return method, path, kw["header_params"], None, None

    def call_api(self, *args: Any, **kw: Any) -> Answer:
        return self.answer


def events(status: int, *lines: object, call: ListCall = CM) -> list[Any]:
    return list(KubeTransport(Api(Answer(status, list(lines)))).watch(call, "shop", "42"))


def test_a_watch_asks_from_the_revision_with_bookmarks_and_a_server_side_end() -> None:
    api = Api(Answer(200, [{"type": "ADDED", "object": {"metadata": {"name": "a"}}}]))
    got = list(KubeTransport(api, watch_timeout_s=99).watch(SECRET, "shop", "42"))
    assert [e["type"] for e in got] == ["ADDED"]
    ((path, query, headers),) = api.asked
    assert path == "/api/v1/namespaces/shop/secrets"
    assert dict(query) == {
        "watch": "1", "resourceVersion": "42", "allowWatchBookmarks": "true", "timeoutSeconds": 99
    }  # fmt: skip
    assert "as=PartialObjectMetadata;" in headers["Accept"], "Secrets' values never sent"


def test_an_error_event_with_code_410_is_gone() -> None:
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old"}}
    with pytest.raises(WatchGone, match="too old"):
        events(200, {"type": "BOOKMARK", "object": {}}, gone)


def test_an_http_410_is_gone() -> None:
    with pytest.raises(WatchGone, match="HTTP 410"):
        events(410)


@pytest.mark.parametrize(
    ("status", "lines", "error", "match"),
    [
        (200, [{"type": "ERROR", "object": {"code": 500, "message": "etcd"}}], LiveReadError,
         r"the server sent an error \(500: etcd\)"),
        (200, ["{not json"], LiveReadError, "an event is not JSON"),
        (403, [{"message": "forbidden: no watch"}], ListDenied, "HTTP 403 forbidden: no watch"),
        (500, [], LiveReadError, r"watching configmaps \(/api/v1/namespaces/shop/configmaps\)"),
    ],
    ids=["error-event", "garbage", "refused", "server-error"],
)  # fmt: skip
def test_anything_else_is_a_read_error_naming_the_call(
    status: int, lines: list[object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        events(status, *lines)
