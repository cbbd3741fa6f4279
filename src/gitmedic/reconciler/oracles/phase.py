"""Analysis phases, Argo Rollouts' vocabulary, closed and ordered best to worst:
Successful < Running < Pending < Inconclusive < Error < Failed.

The combination of oracles takes the worst phase, so one Failed oracle fails the
verification and one oracle that could not measure (Error) can never be
outvoted by the others' successes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class AnalysisPhase(enum.Enum):
    SUCCESSFUL = "Successful"
    RUNNING = "Running"
    PENDING = "Pending"
    INCONCLUSIVE = "Inconclusive"
    ERROR = "Error"
    FAILED = "Failed"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    def is_worse(self, other: AnalysisPhase) -> bool:
        return self.rank > other.rank

    @property
    def completed(self) -> bool:
        return self not in (AnalysisPhase.RUNNING, AnalysisPhase.PENDING)


_ORDER = tuple(AnalysisPhase)


def worst_phase(phases: Iterable[AnalysisPhase]) -> AnalysisPhase:
    """The worst phase; Successful for none."""
    result = AnalysisPhase.SUCCESSFUL
    for phase in phases:
        if phase.is_worse(result):
            result = phase
    return result
