"""Timestamps as the sim writes them: the API's RFC 3339 and Alertmanager's milliseconds.

Time itself comes from the reconciler's injected clock
(:mod:`gitmedic.reconciler.clock`); every timestamp the sim writes (pod start
times, event times, alert ``startsAt``, an Application's ``reconciledAt``) is
derived from ``Clock.now()``, so a run driven by a ``FakeClock`` is
byte-identical every time. :data:`EPOCH` is the readable origin the sim's fake
time starts from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

# 2026-01-01T00:00:00Z: a fixed, readable origin for fake time.
EPOCH = 1767225600.0


def iso(t: float) -> str:
    """The Kubernetes API's form: RFC 3339, UTC, whole seconds."""
    return _iso(int(t))


@lru_cache(maxsize=65536)
def _iso(t: int) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: float) -> str:
    """Alertmanager's form: milliseconds and ``Z``."""
    stamp = datetime.fromtimestamp(t, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
