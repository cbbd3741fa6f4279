"""A signed body is new once: its digest is remembered for the replay window, whatever its id."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from gitmedic.bot.service.webhook.deliveries import REPLAY_WINDOW_S, Delivery, DeliveryStore
from gitmedic.reconciler.transaction import Journal
from gitmedic.reconciler.transaction.journal_store import JournalUnavailable


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


# -- replicas sharing a journal: a delivery is accepted once among them -------------------


def test_replicas_of_one_journal_accept_a_delivery_and_its_replays_once(tmp_path: Path) -> None:
    """Each replica keeps its own file; the journal they share says what any accepted."""
    journal = Journal(tmp_path / "shared.sqlite")

    def seen(keys: Sequence[str], now: float) -> bool:
        return journal.first_seen(keys, now, forget_before=now - REPLAY_WINDOW_S)

    a = DeliveryStore(tmp_path / "a" / "deliveries.sqlite", seen)
    b = DeliveryStore(tmp_path / "b" / "deliveries.sqlite", seen)
    body = b'{"action": "created", "comment": {"body": "/gitmedic retry"}}'
    assert a.accept(Delivery("d-1", "issue_comment", body), now=1000.0)
    assert not b.accept(Delivery("d-1", "issue_comment", body), now=1001.0), "a redelivery"
    assert not b.accept(Delivery("d-2", "issue_comment", body), now=1002.0), "a replay"
    assert b.queued() == [] and b.result("d-1") is None, "nothing of them kept in b"
    assert b.accept(Delivery("d-3", "issue_comment", b"{}"), now=1003.0), "a new one"
    assert a.queued() == ["d-1"] and b.queued() == ["d-3"]


def test_a_journal_that_cannot_be_reached_accepts_nothing(tmp_path: Path) -> None:
    def unreachable(keys: Sequence[str], now: float) -> bool:
        raise JournalUnavailable("cannot connect to the journal at postgresql://db")

    store = DeliveryStore(tmp_path / "deliveries.sqlite", unreachable)
    with pytest.raises(JournalUnavailable):
        store.accept(Delivery("d-1", "ping", b"{}"), now=0.0)
    assert store.queued() == [] and store.result("d-1") is None
    assert DeliveryStore(tmp_path / "deliveries.sqlite").accept(
        Delivery("d-1", "ping", b"{}"), now=1.0
    ), "nothing of it was kept: the sender's delivery again is new"
