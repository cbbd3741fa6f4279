"""A signed body is new once: its digest is remembered for the replay window, whatever its id."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.service.webhook.deliveries import REPLAY_WINDOW_S, Delivery, DeliveryStore


def test_the_same_body_under_a_new_id_is_a_duplicate_within_the_window(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "deliveries.sqlite")
    body = b'{"action": "created", "comment": {"body": "/gitmedic hold"}}'
    assert store.accept(Delivery("d-1", "issue_comment", body), now=1000.0)
    assert not store.accept(Delivery("d-2", "issue_comment", body), now=1001.0)
    assert store.queued() == ["d-1"]


def test_after_the_window_the_same_body_is_accepted_again(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "deliveries.sqlite")
    body = b'{"zen": "Design for failure."}'
    assert store.accept(Delivery("d-1", "ping", body), now=0.0)
    assert store.accept(Delivery("d-2", "ping", body), now=REPLAY_WINDOW_S + 1)


def test_a_different_body_and_a_repeated_id_are_told_apart(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "deliveries.sqlite")
    assert store.accept(Delivery("d-1", "ping", b"{}"), now=0.0)
    assert store.accept(Delivery("d-2", "ping", b'{"a": 1}'), now=1.0)
    assert not store.accept(Delivery("d-1", "ping", b'{"b": 2}'), now=2.0)  # id seen
    assert store.queued() == ["d-1", "d-2"]


def test_a_refused_id_leaves_no_digest_behind(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "deliveries.sqlite")
    store.accept(Delivery("d-1", "ping", b"{}"), now=0.0)
    assert not store.accept(Delivery("d-1", "ping", b'{"new": 1}'), now=1.0)
    assert store.accept(Delivery("d-9", "ping", b'{"new": 1}'), now=2.0)
