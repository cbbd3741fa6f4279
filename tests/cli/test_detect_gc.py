"""detect reads with the cycle collector paused and freezes what it read before the
collector resumes (its first full collection would walk a million objects again)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gitmedic.bot.cli.detect import _without_cyclic_gc


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_what_was_read_is_frozen_when_the_collector_resumes() -> None:
    gc.enable()
    before = gc.get_freeze_count()
    with _without_cyclic_gc():
        assert not gc.isenabled()
        read = [{"kind": "ConfigMap", "data": {}} for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(read)


def test_a_paused_collector_stays_paused_and_nothing_is_frozen() -> None:
    gc.disable()
    before = gc.get_freeze_count()
    with _without_cyclic_gc():
        read = [{} for _ in range(100)]
    assert not gc.isenabled()
    assert gc.get_freeze_count() == before
    del read
