"""The Lease API through the ``kubernetes`` client's raw calls: the paths and bodies
sent, 409 as a conflict, and every other failure an error naming the call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import urllib3

from gitmedic.reconciler.leases.api import LeaseApiError, LeaseConflict
from gitmedic.reconciler.leases.kube import KubeLeases
from gitmedic.reconciler.leases.record import LeaseRecord, to_object

RECORD = LeaseRecord("me", 15, 1.0, 2.0, 0, "5", {"gitmedic.dev/shard-group": "g"})


@dataclass
class Response:
    status: int
    body: bytes

    def read(self) -> bytes:
        return self.body


@dataclass
class StubClient:
    """``param_serialize`` and ``call_api`` as the client has them; answers in turn."""

    answers: list[Response | Exception]
    sent: list[tuple[str, str, Any]] = field(default_factory=list)

    def param_serialize(self, method: str, path: str, **kw: Any) -> tuple[Any, ...]:
        query = "&".join(f"{k}={v}" for k, v in kw["query_params"])
        return method, path + (f"?{query}" if query else ""), kw["header_params"], kw["body"], None

    def call_api(self, method: str, url: str, **kw: Any) -> Response:
        self.sent.append((method, url, kw["body"]))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def ok(obj: object) -> Response:
    return Response(200, json.dumps(obj).encode())


BASE = "/apis/coordination.k8s.io/v1/namespaces/bots/leases"


def test_list_asks_by_label_and_reads_every_lease() -> None:
    item = to_object("g-replica-0", "bots", RECORD)
    client = StubClient([ok({"items": [item]})])
    assert KubeLeases(client, "bots").list("gitmedic.dev/shard-group=g") == {"g-replica-0": RECORD}
    assert client.sent == [("GET", f"{BASE}?labelSelector=gitmedic.dev/shard-group=g", None)]


def test_an_update_puts_the_version_it_read() -> None:
    written = to_object("x", "bots", LeaseRecord(**{**RECORD.__dict__, "version": "6"}))
    client = StubClient([ok(written)])
    assert KubeLeases(client, "bots").update("x", RECORD).version == "6"
    method, url, body = client.sent[0]
    assert (method, url, body["metadata"]["resourceVersion"]) == ("PUT", f"{BASE}/x", "5")


def test_409_is_a_conflict() -> None:
    client = StubClient([Response(409, b'{"message": "the object has been modified"}')])
    with pytest.raises(LeaseConflict, match="409"):
        KubeLeases(client, "bots").create("x", RECORD)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (Response(403, b'{"message": "leases is forbidden"}'), "HTTP 403 leases is forbidden"),
        (Response(200, b"<html>"), "not JSON"),
        (Response(200, b"[]"), "not an object"),
        (Response(200, b'{"items": {}}'), "not a list"),
        (Response(200, b'{"items": [{"metadata": {}}]}'), "without a name"),
        (urllib3.exceptions.ProtocolError("connection refused"), "cannot reach"),
    ],
)
def test_every_other_failure_is_an_error_naming_the_call(
    answer: Response | Exception, why: str
) -> None:
    with pytest.raises(LeaseApiError, match=why) as raised:
        KubeLeases(StubClient([answer]), "bots").list("a=b")
    assert not isinstance(raised.value, LeaseConflict) and "leases" in str(raised.value).lower()


def test_an_answer_for_another_lease_is_refused() -> None:
    client = StubClient([ok(to_object("y", "bots", RECORD))])
    with pytest.raises(LeaseApiError, match="answered for y"):
        KubeLeases(client, "bots").update("x", RECORD)
