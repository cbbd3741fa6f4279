"""Admission before authentication: caps evict the costliest stranger, never the newcomer."""

from __future__ import annotations

import pytest

from gitmedic.bot.service.webhook.admission import Admission


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0  # each arrival a second after the last
        return self.now


def admission(pending: int = 3, size: int = 100) -> Admission:
    return Admission(max_pending=pending, max_bytes=size, clock=Clock())


def test_the_newcomer_is_admitted_and_the_oldest_evicted() -> None:
    gate = admission(pending=3)
    assert [gate.arrived(name, "10.0.0.1") for name in "abc"] == [[], [], []]
    assert gate.arrived("d", "10.0.0.1") == ["a"]
    assert gate.arrived("e", "10.0.0.1") == ["b"]
    assert gate.holding == (3, 0)


def test_the_peer_holding_the_most_connections_loses_one_first() -> None:
    gate = admission(pending=3)
    gate.arrived("genuine-old", "192.0.2.10")  # the oldest, but from a peer with one
    gate.arrived("flood-1", "198.51.100.7")
    gate.arrived("flood-2", "198.51.100.7")
    assert gate.arrived("healthz", "10.0.0.5") == ["flood-1"]


def test_bytes_count_as_received_and_the_largest_holder_goes() -> None:
    gate = admission(pending=10, size=100)
    gate.arrived("big", "a")
    gate.arrived("small", "b")
    assert gate.received("big", 90) == []
    assert gate.received("small", 5) == []
    assert gate.received("small", 10) == ["big"]  # 105 > 100: the 90-byte holder goes
    assert gate.holding == (1, 15)


def test_a_client_that_outgrows_everyone_evicts_itself() -> None:
    gate = admission(pending=10, size=100)
    gate.arrived("other", "a")
    gate.received("other", 10)
    gate.arrived("hog", "b")
    assert gate.received("hog", 200) == ["hog"]
    assert gate.holding == (1, 10)


def test_a_settled_request_holds_nothing_and_a_new_one_starts_from_zero() -> None:
    gate = admission(pending=2, size=100)
    gate.arrived("keepalive", "a")
    gate.received("keepalive", 60)
    gate.settled("keepalive")
    assert gate.holding == (0, 0)
    assert gate.received("keepalive", 500) == []  # between requests: not counted
    gate.arrived("keepalive", "a")  # its next request
    assert gate.received("keepalive", 60) == []
    assert gate.holding == (1, 60)


def test_caps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Admission(max_pending=0, max_bytes=1)
