from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live.kmock_thread import KmockThread, kmock_server


@pytest.fixture
def cluster() -> Iterator[KmockThread]:
    """A fresh kmock emulator per test, serving every built-in kind the loader lists."""
    with kmock_server() as server:
        yield server
