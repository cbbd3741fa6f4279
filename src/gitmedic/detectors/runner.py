"""Running detectors in isolation, and fire/clear persistence for the monitor.

One detector that raises becomes an error entry naming it; the others still run.
There is no wall-clock budget: a verdict must not depend on how loaded the
machine is, and every detector is gitmedic's own code, bounded by its input
(learned memory is data: CEL rules with a static cost bound and bounded inputs,
:mod:`gitmedic.bot.memory.cel`, never code from a repo). An error is never "no
finding": each caller decides what it means (``detect`` exits 2, the gate
refuses the candidate, the monitor keeps that detector's last findings).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from gitmedic.detectors.accept import honour_ignores
from gitmedic.detectors.finding import Finding, sort_findings
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector


@dataclass(frozen=True)
class DetectorError:
    detector: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"detector": self.detector, "message": self.message}


@dataclass(frozen=True)
class Evaluation:
    findings: tuple[Finding, ...]
    errors: tuple[DetectorError, ...] = ()
    seconds: Mapping[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> frozenset[str]:
        """The detectors that raised: their findings are unknown, not absent."""
        return frozenset(e.detector for e in self.errors)

    def problems(self) -> list[str]:
        return [f"detector {e.detector} failed: {e.message}" for e in self.errors]


def run_detectors(detectors: Iterable[Detector], snapshot: Snapshot) -> Evaluation:
    findings: list[Finding] = []
    errors: list[DetectorError] = []
    seconds: dict[str, float] = {}
    for det in detectors:
        if not det.spec.scope.applies_to(snapshot.mode):
            continue
        start = time.perf_counter()
        try:
            found = list(det.detect(snapshot))
        except Exception as exc:  # isolation is the point: report, keep going
            errors.append(DetectorError(det.id, f"{type(exc).__name__}: {exc}"))
            continue
        finally:
            seconds[det.id] = time.perf_counter() - start
        bad = [f for f in found if not isinstance(f, Finding) or f.detector != det.id]
        if bad:
            errors.append(DetectorError(det.id, "returned something that is not its own Finding"))
            continue
        findings.extend(found)
    kept = honour_ignores(snapshot, _unique(findings))
    return Evaluation(tuple(sort_findings(kept)), tuple(errors), seconds)


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.fingerprint, f)
    return list(seen.values())


# -- persistence ----------------------------------------------------------------------


@dataclass(frozen=True)
class Track:
    finding: Finding
    present: int = 0  # consecutive evaluations seen
    absent: int = 0  # consecutive evaluations not seen
    active: bool = False


@dataclass(frozen=True)
class Transition:
    activated: tuple[Finding, ...] = ()
    cleared: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Persistence:
    """Fire after ``fire_after`` consecutive sightings, clear after ``clear_after`` misses.

    Immutable: ``observe`` returns the next state and what changed, so the monitor
    can persist it between evaluations and a restart loses nothing.
    """

    tracks: Mapping[str, Track] = field(default_factory=dict)

    def active(self) -> list[Finding]:
        return sort_findings([t.finding for t in self.tracks.values() if t.active])

    def observe(
        self, findings: Iterable[Finding], thresholds: Mapping[str, tuple[int, int]]
    ) -> tuple[Persistence, Transition]:
        seen = {f.fingerprint: f for f in findings}
        tracks: dict[str, Track] = {}
        activated: list[Finding] = []
        cleared: list[Finding] = []
        for fp in set(self.tracks) | set(seen):
            old = self.tracks.get(fp)
            latest = seen[fp] if fp in seen else self.tracks[fp].finding
            fire, clear = thresholds.get(latest.detector, (2, 2))
            if fp in seen:
                t = replace(old or Track(seen[fp]), finding=seen[fp], absent=0)
                t = replace(t, present=t.present + 1)
                if not t.active and t.present >= fire:
                    t = replace(t, active=True)
                    activated.append(t.finding)
            else:
                assert old is not None
                t = replace(old, present=0, absent=old.absent + 1)
                if t.active and t.absent >= clear:
                    cleared.append(t.finding)
                    continue
                if not t.active:
                    continue
            tracks[fp] = t
        return Persistence(tracks), Transition(
            tuple(sort_findings(activated)), tuple(sort_findings(cleared))
        )


def thresholds_of(detectors: Iterable[Detector]) -> dict[str, tuple[int, int]]:
    return {d.id: (d.spec.fire_after, d.spec.clear_after) for d in detectors}
