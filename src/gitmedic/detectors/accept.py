"""Findings a team has accepted on the object itself: the ``gitmedic.io/ignore`` annotation.

``gitmedic.io/ignore: scaled-to-zero,probe-port`` on an object drops those
detectors' findings about it, wherever detectors run (detect in CI, the gate,
the loop's monitor), because the runner applies it. An acceptance must say why:
without ``gitmedic.io/ignore-reason`` the finding stays, and its evidence says
the annotation was not honoured, so a bare opt-out never silences anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Snapshot

IGNORE = "gitmedic.io/ignore"
REASON = "gitmedic.io/ignore-reason"

__all__ = ["IGNORE", "REASON", "honour_ignores"]


def honour_ignores(snapshot: Snapshot, findings: Iterable[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in findings:
        obj = snapshot.get(f.resource.kind, f.resource.namespace, f.resource.name)
        notes = obj.annotations if obj is not None else {}
        if f.detector not in _listed(notes.get(IGNORE)):
            out.append(f)
        elif not str(notes.get(REASON) or "").strip():
            why = f"{IGNORE} names {f.detector}, but without {REASON} it is not honoured"
            out.append(replace(f, evidence=f"{f.evidence}; {why}" if f.evidence else why))
    return out


def _listed(value: object) -> set[str]:
    return {part.strip() for part in str(value or "").split(",") if part.strip()}
