"""One reader of a Kubernetes ``Status`` body's message, for the lists, the watches and the
Lease calls: the API server's reason in the error, never a crash on an answer that is not one."""

from __future__ import annotations

import json

import pytest

from gitmedic.reconciler.live import status_message


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            b'{"kind": "Status", "code": 403, "message": "leases is forbidden"}',
            "leases is forbidden",
        ),
        (json.dumps({"message": "x" * 500}).encode(), "x" * 300),
        (b"<html>bad gateway</html>", ""),
        (b"", ""),
        (b"\xff\xfe not UTF-8", ""),
        (b'["message"]', ""),
        (b'{"message": 403}', ""),  # not a Status' message: nothing made up from it
        (b'{"kind": "Status", "code": 500}', ""),
    ],
    ids=["status", "long", "html", "empty", "bytes", "list", "number", "no-message"],
)
def test_the_message_of_a_status_body_or_nothing(raw: bytes, said: str) -> None:
    assert status_message(raw) == said


def test_a_limit_of_its_own() -> None:
    assert status_message(b'{"message": "forbidden: no watch"}', limit=9) == "forbidden"
