"""Time as an injected dependency: every wait in the reconciler goes through a Clock.

Sync waits, oracle windows and retries call ``clock.sleep`` and read
``clock.now``; nothing calls ``time.sleep`` directly. In tests a ``FakeClock``
advances instantly when slept on, so a ten-minute sync timeout runs in
microseconds and the test can assert the exact moment it gave up (kopf's
fake-loop-time idea, without an event loop).

``now()`` is seconds since the epoch (a float), so it can also stamp records.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Wall-clock time; sleeping blocks the thread."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """Time that moves only when slept on (or advanced), and records every sleep."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot sleep a negative time ({seconds})")
        self.sleeps.append(seconds)
        self._now += seconds

    def advance(self, seconds: float) -> None:
        """Move time forward without recording a sleep (something else took time)."""
        self._now += seconds
