"""The health vocabulary: a closed, ordered status enum and a frozen result.

The order is gitops-engine's ``healthOrder``: Healthy < Suspended < Progressing <
Missing < Degraded < Unknown. Aggregation takes the worst, so one Degraded pod
makes the application Degraded and an object whose health cannot be assessed
(Unknown) counts as worse than any known state.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class HealthStatus(enum.Enum):
    HEALTHY = "Healthy"
    SUSPENDED = "Suspended"
    PROGRESSING = "Progressing"
    MISSING = "Missing"
    DEGRADED = "Degraded"
    UNKNOWN = "Unknown"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    def is_worse(self, other: HealthStatus) -> bool:
        """Is this status a worse condition than ``other``?"""
        return self.rank > other.rank

    @classmethod
    def parse(cls, value: object) -> HealthStatus:
        """A status from its API spelling; anything else is Unknown."""
        for status in cls:
            if status.value == value:
                return status
        return cls.UNKNOWN


_ORDER = tuple(HealthStatus)


@dataclass(frozen=True)
class Health:
    status: HealthStatus
    message: str = ""

    def to_json(self) -> dict[str, str]:
        return {"status": self.status.value, "message": self.message}


HEALTHY = Health(HealthStatus.HEALTHY)


def worst(healths: Iterable[Health | None]) -> Health:
    """The worst of several healths (None = no health, ignored); Healthy when empty.

    Ties keep the first, so the message names the first object in that state.
    """
    result = HEALTHY
    for h in healths:
        if h is not None and h.status.is_worse(result.status):
            result = h
    return result
