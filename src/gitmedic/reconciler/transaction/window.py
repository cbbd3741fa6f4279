"""The verification window as data: journaled measurements, one per step.

A deployed change is watched by measurements, each taken in one step of the
runner and appended to the transaction's journal before the next is due, so
nothing sleeps inside a step and a process killed mid-window resumes it from
what was recorded: the measurements already taken count, and the verdict is
judged from the plan's checkpoint and the recorded measurements alone.

Two stages are measured:

- ``sync``: while the GitOps engine has not reported the merged commit deployed,
  each poll records the critical signals (findings, alerts) that fire, so a
  candidate that breaks what it changed is caught before the sync timeout
  (:func:`~gitmedic.reconciler.transaction.verdict.fail_fast`);
- ``window``: after the sync, every oracle once per interval, each oracle's
  phase for that measurement, what got worse, mu of what they saw together,
  the findings firing (are the targets cleared?) and the same critical signals.

A measurement names the revision it measured, so the fix's window and its
revert's window never mix.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class Stage(enum.Enum):
    SYNC = "sync"
    WINDOW = "window"


@dataclass(frozen=True)
class Signal:
    """A critical finding or alert firing at a measurement, and the objects it is on.

    ``key`` is what the checkpoint would have recorded of it (a finding's detector
    and object, an alert's problem line), so "absent at the checkpoint" is a lookup."""

    key: str
    objects: tuple[str, ...]  # "Kind namespace/name": its object, related, owner, references

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "objects": list(self.objects)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Signal:
        return cls(str(data["key"]), tuple(str(o) for o in data.get("objects", ())))


@dataclass(frozen=True)
class OracleMark:
    """One oracle's part of one measurement: its phase, what got worse, why it erred."""

    oracle: str
    phase: str  # an AnalysisPhase value
    worse: tuple[str, ...] = ()
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle,
            "phase": self.phase,
            "worse": list(self.worse),
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OracleMark:
        return cls(
            str(data["oracle"]),
            str(data["phase"]),
            tuple(str(w) for w in data.get("worse", ())),
            str(data.get("message", "")),
        )


@dataclass(frozen=True)
class Measurement:
    at: float  # on the injected clock
    stage: Stage
    sha: str  # the deployed (or being deployed) revision measured
    signals: tuple[Signal, ...] = ()
    marks: tuple[OracleMark, ...] = ()  # window stage: one per oracle still measuring
    mu: float = 0.0
    seen: tuple[str, ...] = ()  # what the oracles saw, one line each (the retry's feedback)
    firing: tuple[str, ...] = ()  # fingerprints of the findings firing

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "stage": self.stage.value,
            "sha": self.sha,
            "signals": [s.to_json() for s in self.signals],
            "marks": [m.to_json() for m in self.marks],
            "mu": self.mu,
            "seen": list(self.seen),
            "firing": list(self.firing),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Measurement:
        return cls(
            at=float(data["at"]),
            stage=Stage(data["stage"]),
            sha=str(data["sha"]),
            signals=tuple(Signal.from_json(s) for s in data.get("signals", ())),
            marks=tuple(OracleMark.from_json(m) for m in data.get("marks", ())),
            mu=float(data.get("mu", 0.0)),
            seen=tuple(str(s) for s in data.get("seen", ())),
            firing=tuple(str(f) for f in data.get("firing", ())),
        )


def of_stage(
    measurements: Sequence[Measurement], stage: Stage, sha: str
) -> tuple[Measurement, ...]:
    """The measurements of one stage of one revision, in the order they were taken."""
    return tuple(m for m in measurements if m.stage is stage and m.sha == sha)
