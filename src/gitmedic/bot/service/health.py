"""Whether serve's monitor is alive: ``/healthz`` fails when it has stopped making progress.

A process whose HTTP side answers while its monitor thread is stuck (a hung call,
a step failing at every interval) looks healthy to the kubelet and watches
nothing. The monitor beats on every sign of progress: a step that completed, an
event the loop reports (each persisted step of a transaction), a wait that
returned (a sync poll, the verification window). ``/healthz`` answers 503 once
no beat came for ``stall_intervals`` monitor intervals, so the liveness probe
restarts the pod, which resumes from its journal.

A step that raised is not progress: a monitor failing at every interval is as
useless as a stuck one, and the restart (or the crash loop it turns into) is
what makes it visible.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEFAULT_STALL_INTERVALS = 10.0


class Heartbeat:
    def __init__(
        self,
        interval_s: float,
        stall_intervals: float = DEFAULT_STALL_INTERVALS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval_s <= 0 or stall_intervals < 1:
            raise ValueError("the interval must be positive and the stall multiple at least 1")
        self.limit_s = interval_s * stall_intervals
        self._clock = clock
        self._lock = threading.Lock()
        self._last = clock()  # starting counts: the first pass has the whole limit
        self.passes = 0

    def beat(self) -> None:
        with self._lock:
            self._last = self._clock()

    def passed(self) -> None:
        """A monitor step completed."""
        with self._lock:
            self._last = self._clock()
            self.passes += 1

    def stalled(self) -> str | None:
        """Why the monitor counts as stalled, or None while it makes progress."""
        with self._lock:
            quiet = self._clock() - self._last
        if quiet <= self.limit_s:
            return None
        return (
            f"the monitor made no progress for {quiet:.0f}s (limit {self.limit_s:.0f}s:"
            f" GITMEDIC_HEALTH_STALL_INTERVALS x the interval); {self.passes} pass(es) so far"
        )
