"""Unauthenticated clients cannot starve signed deliveries or the health endpoints.

Against ``gitmedic serve`` in a subprocess, with the read deadline at its default
(10 s), so that only admission, not the deadline, can let a genuine delivery in:
GitHub does not redeliver, so a signed ``/gitmedic hold`` refused for 10 s is lost,
and a liveness probe answered 503 for 10 s restarts the pod. Each attack below got
a 503 for its whole read window on the service as it was (a budget reserved by the
declared ``Content-Length``, uvicorn's ``limit_concurrency`` in front of
``/healthz``). Every socket has a timeout and every loop a bound.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.bot.fakes import scene
from tests.security.serve_proc import Served, serve

pytestmark = pytest.mark.integration

ANSWER_WITHIN_S = 1.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    world = scene(tmp_path)
    env = {"GITMEDIC_READ_TIMEOUT_S": "10", "GITMEDIC_KEEP_ALIVE_S": "5"}
    with serve(world.repo, tmp_path / "state", env) as running:
        yield running


def _head(length: int) -> bytes:
    return (
        "POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nX-GitHub-Event: issue_comment\r\n"
        f"X-GitHub-Delivery: d-attack\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _open(served: Served, stack: ExitStack, count: int, first_bytes: bytes) -> int:
    """``count`` connections that send ``first_bytes`` and then nothing; how many stayed open."""
    opened = 0
    for _ in range(count):
        sock = stack.enter_context(served.connect())
        try:
            sock.sendall(first_bytes)
            opened += 1
        except OSError:
            continue  # closed at once by the server: also fine
    time.sleep(0.3)  # let the server read what they sent before the genuine client comes
    return opened


def _signed_delivery_time(served: Served, delivery: str) -> tuple[int, float]:
    start = time.monotonic()
    answer = served.post(
        "ping", {"zen": "Keep it logically awesome.", "hook_id": delivery}, delivery
    )
    return answer.status_code, time.monotonic() - start


def _health_time(served: Served) -> tuple[int, float]:
    start = time.monotonic()
    answer = httpx.get(f"{served.url}/healthz", timeout=10)
    return answer.status_code, time.monotonic() - start


def test_four_uploads_declaring_16_mib_in_all_do_not_refuse_a_signed_delivery(
    served: Served,
) -> None:
    with ExitStack() as stack:
        _open(served, stack, 4, _head(4 * 1024 * 1024))  # 16 MiB declared, none sent
        status, took = _signed_delivery_time(served, "d-genuine-1")
    assert status == 202, f"a signed delivery got {status} behind 4 declared uploads"
    assert took < ANSWER_WITHIN_S


def test_thirty_two_bodies_that_never_arrive_do_not_refuse_a_signed_delivery(
    served: Served,
) -> None:
    with ExitStack() as stack:
        _open(served, stack, 32, _head(2))  # two bytes declared, none sent
        status, took = _signed_delivery_time(served, "d-genuine-2")
    assert status == 202, f"a signed delivery got {status} behind 32 stalled bodies"
    assert took < ANSWER_WITHIN_S


def test_seventy_half_sent_requests_leave_healthz_answering(served: Served) -> None:
    with ExitStack() as stack:
        _open(served, stack, 70, b"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        status, took = _health_time(served)
        ready = httpx.get(f"{served.url}/readyz", timeout=10).status_code
    assert (status, ready) == (200, 200), f"/healthz {status}, /readyz {ready}"
    assert took < ANSWER_WITHIN_S


def test_a_hundred_slow_or_oversized_clients_starve_nothing(served: Served) -> None:
    """The acceptance load: 100 unauthenticated clients of every slow shape at once."""
    shapes = [
        _head(5_000_000),  # declares a large body, sends none
        _head(2),  # declares a tiny body, sends none
        b"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # headers never end
        _head(4_000_000) + b"{" + b" " * 60_000,  # starts the body, then stalls
    ]
    with ExitStack() as stack:
        for shape in shapes:
            _open(served, stack, 25, shape)
        answers = [_signed_delivery_time(served, f"d-load-{i}") for i in range(5)]
        health = [_health_time(served) for _ in range(5)]
    assert [status for status, _ in answers] == [202] * 5, answers
    assert max(took for _, took in answers) < ANSWER_WITHIN_S, answers
    assert [status for status, _ in health] == [200] * 5, health
    assert max(took for _, took in health) < ANSWER_WITHIN_S, health


def test_memory_stays_bounded_when_uploads_actually_send_their_bytes(served: Served) -> None:
    """Capacity follows bytes received: forty 4 MB bodies, sent and stalled, are evicted."""
    body = b"{" + b" " * (4_000_000 - 2)  # all but the last byte
    before = served.rss_kib()
    with ExitStack() as stack:
        for _ in range(40):
            sock = stack.enter_context(served.connect())
            try:
                sock.sendall(_head(4_000_000))
                sock.settimeout(2)
                sock.sendall(body)
            except OSError:
                pass  # evicted and closed: what a bounded server does
        grown_mib = (served.rss_kib() - before) / 1024
        status, took = _signed_delivery_time(served, "d-after-uploads")
    assert grown_mib < 64, f"40 stalled 4 MB uploads grew the server by {grown_mib:.0f} MiB"
    assert status == 202 and took < ANSWER_WITHIN_S, (status, took)


def test_a_signed_body_replayed_under_a_new_delivery_id_is_a_duplicate(served: Served) -> None:
    payload = {
        "action": "created",
        "issue": {"number": 1, "pull_request": None},
        "comment": {"id": 9, "body": "/gitmedic hold", "user": {"login": "mallory"}},
        "repository": {"full_name": "acme/shop"},
        "sender": {"login": "mallory"},
    }
    first = served.post("issue_comment", payload, "d-original")
    replayed = served.post("issue_comment", payload, "d-replayed-under-new-id")
    assert first.status_code == 202
    assert replayed.status_code == 200
    assert replayed.json()["status"] == "duplicate delivery"


def _sock_closed(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_the_oldest_stalled_client_is_the_one_evicted(served: Served) -> None:
    """Admission evicts the longest-waiting unauthenticated client, never the newcomer."""
    with ExitStack() as stack:
        first = stack.enter_context(served.connect())
        first.sendall(_head(2))
        time.sleep(0.2)
        _open(served, stack, 80, _head(2))  # past the cap: someone must go
        status, _ = _signed_delivery_time(served, "d-evict")
        assert _sock_closed(first), "the oldest stalled client was kept"
    assert status == 202
