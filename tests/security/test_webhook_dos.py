"""Attacks on the webhook before authentication, against ``gitmedic serve`` in a subprocess.

Each one cost the shipped service dearly: eighty stalled uploads held 380 MiB,
a slowloris connection stayed open, the unsigned ``X-GitHub-Event`` header
became a metrics label per value, and signed JSON nested 3,000 deep answered 500.
Every loop here is bounded and every socket has a timeout, so a regression fails
instead of hanging.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.bot.fakes import scene
from tests.security.serve_proc import Served, serve

pytestmark = pytest.mark.integration

DECLARED = 5_000_000  # under the 5 MiB limit: only a budget stops eighty of these
READ_TIMEOUT_S = 1.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    world = scene(tmp_path)
    env = {"GITMEDIC_READ_TIMEOUT_S": str(READ_TIMEOUT_S), "GITMEDIC_KEEP_ALIVE_S": "1"}
    with serve(world.repo, tmp_path / "state", env) as running:
        yield running


def _head(length: int, event: str = "issue_comment") -> bytes:
    return (
        f"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nX-GitHub-Event: {event}\r\n"
        f"X-GitHub-Delivery: d-1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (reading what it answers), None if it did not."""
    start = time.monotonic()
    sock.settimeout(0.1)
    while time.monotonic() - start < seconds:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except OSError:  # reset: closed as well
            return time.monotonic() - start
    return None


def test_eighty_stalled_uploads_keep_memory_bounded(served: Served) -> None:
    body = memoryview(b"x" * (DECLARED - 1))  # all but the last byte, then stall
    before = served.rss_kib()
    stalled: list[socket.socket] = []
    try:
        for _ in range(80):
            sock = served.connect()
            stalled.append(sock)
            try:
                sock.sendall(_head(DECLARED))
                sock.settimeout(2)
                sock.sendall(body)
            except OSError:
                pass  # refused and closed: what a bounded server does
        grown_mib = (served.rss_kib() - before) / 1024
    finally:
        for sock in stalled:
            sock.close()
    assert grown_mib < 64, f"80 stalled uploads grew the server by {grown_mib:.0f} MiB"


def test_a_slowloris_client_is_disconnected_within_the_read_deadline(served: Served) -> None:
    with served.connect() as sock:
        sock.sendall(b"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        start, closed = time.monotonic(), False
        sock.settimeout(0.2)
        while not closed and time.monotonic() - start < 6:
            try:
                sock.sendall(b"X-Slow: a\r\n")  # one header line every 0.2 s, never the end
                closed = sock.recv(1024) == b""
            except TimeoutError:
                continue
            except OSError:
                closed = True
        waited = time.monotonic() - start
    assert closed, "the slowloris connection was still open after 6 s"
    assert waited < READ_TIMEOUT_S + 2


def test_a_body_trickling_in_is_cut_off_at_the_read_deadline(served: Served) -> None:
    with served.connect() as sock:
        sock.sendall(_head(1000) + b"{")
        start = time.monotonic()
        closed = None
        while closed is None and time.monotonic() - start < 6:
            try:
                sock.sendall(b" ")
            except OSError:
                closed = time.monotonic() - start
                break
            closed = _closed_within(sock, 0.3)
            if closed is not None:
                closed = time.monotonic() - start
    assert closed is not None and closed < READ_TIMEOUT_S + 2


def test_an_oversized_declared_length_is_413_at_once_and_the_connection_closed(
    served: Served,
) -> None:
    with served.connect() as sock:
        sock.sendall(_head(10**9))  # no body byte sent: the answer must not wait for one
        sock.settimeout(3)
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 413 ")
        closed = _closed_within(sock, 0.8)  # not kept alive for a body nobody will read
    assert closed is not None, "the connection stayed open after the 413"


def test_three_thousand_event_names_make_a_bounded_number_of_series(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=10) as client:
        for i in range(3000):
            headers = {"X-GitHub-Event": f"forged-{i}", "X-GitHub-Delivery": f"d-{i}"}
            answer = client.post("/webhooks/github", content=b"{}", headers=headers)
            assert answer.status_code == 401
        metrics = client.get("/metrics").text
    series = [line for line in metrics.splitlines()
              if line.startswith("gitmedic_webhook_deliveries_total{")]  # fmt: skip
    assert 0 < len(series) <= 3, series[:5]
    assert 'event="other"' in "".join(series)


def test_signed_json_nested_three_thousand_deep_is_a_400(served: Served) -> None:
    deep = b'{"a":' * 3000 + b"1" + b"}" * 3000
    response = served.post_raw("ping", deep, "d-deep")
    assert response.status_code == 400
    assert "nested deeper" in response.json()["status"]
    shallow = served.post("ping", {"zen": json.dumps({"a": [[1]]})}, "d-ok")
    assert shallow.status_code == 202
