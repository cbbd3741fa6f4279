"""Time for the simulated cluster: an injected clock, never the wall clock in the model.

Every timestamp the sim writes (pod start times, event times, alert ``startsAt``,
an Application's ``reconciledAt``) is derived from ``Clock.now()``, so a test or a
benchmark that drives a :class:`FakeClock` gets byte-identical output every run.
Times are seconds since the epoch as floats; :func:`iso` renders them the way the
Kubernetes API does (RFC 3339, UTC, whole seconds).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

# 2026-01-01T00:00:00Z: a fixed, readable origin for fake time.
EPOCH = 1767225600.0


class Clock(Protocol):
    def now(self) -> float: ...


class SystemClock:
    """The wall clock, for the interactive commands only."""

    def now(self) -> float:
        return time.time()


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = EPOCH) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError(f"a clock cannot go back ({seconds}s)")
        self._now += seconds
        return self._now


def iso(t: float) -> str:
    return _iso(int(t))


@lru_cache(maxsize=65536)
def _iso(t: int) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: float) -> str:
    """Alertmanager's form: milliseconds and ``Z``."""
    stamp = datetime.fromtimestamp(t, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
