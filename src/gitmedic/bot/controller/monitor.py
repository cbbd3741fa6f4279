"""The monitor: detectors over the live snapshot each interval, incrementally, with persistence.

A detector declares the kinds it reads (``spec.kinds``); an evaluation digests
the snapshot per kind and re-runs only the detectors that read a kind whose
digest changed since the last evaluation (or all, the first time). The others'
findings are reused, so a quiet cluster costs one digest per kind and no
detector run. Each detector runs in the runner's isolation (an error is an
entry, never a crash of the loop). A detector that fails keeps its last findings
(its verdict is unknown now, never "nothing found") and is named in ``failing``
until it runs again; one that never ran cleanly has no findings to keep, which
``failing`` says too.

Runtime-only evidence: when no detector finds anything but alerts fire (a
B-class fault: the database revoked a password, the manifests are fine), each
firing critical alert becomes a finding of the pseudo-detector ``alerts`` on the
Service it names, so the incident opens and the responder escalates it with
the alert as evidence. Findings then pass :class:`Persistence` (fire/clear
after consecutive sightings) and the result is the transition.

A workload still starting within its rollout's progress deadline is not a fault:
the findings its start-up explains (not available yet, no ready endpoints yet)
are held back (``held``) and count only once the deadline passes with the
rollout unfinished (:mod:`gitmedic.bot.controller.rollouts`). While some are held, the
alerts are not turned into findings either: a caller erring because a Service
has no endpoint yet is the same start-up seen from outside.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitmedic.bot.controller.rollouts import held_back
from gitmedic.detectors.finding import Finding, Resource, Severity, sort_findings
from gitmedic.detectors.runner import Persistence, Transition, run_detectors, thresholds_of
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector

ALERTS_DETECTOR = "alerts"


@dataclass
class Monitor:
    detectors: Sequence[Detector]
    persistence: Persistence = field(default_factory=Persistence)
    digests: dict[str, str] = field(default_factory=dict)
    cached: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    runs: int = 0  # detector runs so far (the incremental evaluation's cost)
    held: tuple[Finding, ...] = ()  # explained by a rollout within its deadline, last time
    last_seconds: float = 0.0  # wall time of the last evaluation (serve's metrics)
    # detector id -> why it failed at the last evaluation (its last findings are kept)
    failing: dict[str, str] = field(default_factory=dict)

    def evaluate(
        self, snapshot: Snapshot, alerts: Sequence[Mapping[str, Any]] = ()
    ) -> tuple[tuple[Finding, ...], Transition]:
        started = time.perf_counter()
        changed = self._changed_kinds(snapshot)
        for det in self.detectors:
            stale = det.id not in self.cached or det.id in self.failing
            if stale or det.spec.kinds & changed or not det.spec.kinds:
                self._run(det, snapshot)
        # Info findings are notes (an optional component not deployed), never incidents.
        findings, held = held_back(
            (
                f
                for found in self.cached.values()
                for f in found
                if f.severity.rank >= Severity.WARNING.rank
            ),
            snapshot,
        )
        self.held = tuple(sort_findings(held))
        if not findings and not held:
            findings = alert_findings(alerts)
        thresholds = thresholds_of(self.detectors)
        self.persistence, transition = self.persistence.observe(findings, thresholds)
        self.last_seconds = time.perf_counter() - started
        return tuple(sort_findings(findings)), transition

    def _run(self, det: Detector, snapshot: Snapshot) -> None:
        """One detector's findings; on an error its last ones stay, and ``failing`` says so."""
        evaluation = run_detectors([det], snapshot)
        self.runs += 1
        if evaluation.errors:
            self.failing[det.id] = evaluation.errors[0].message
            self.cached.setdefault(det.id, ())
            return
        self.failing.pop(det.id, None)
        self.cached[det.id] = evaluation.findings

    def _changed_kinds(self, snapshot: Snapshot) -> frozenset[str]:
        bodies: dict[str, list[str]] = {}
        for obj in snapshot:
            bodies.setdefault(obj.kind, []).append(json.dumps(obj.body, sort_keys=True))
        digests = {
            kind: hashlib.sha256("\n".join(sorted(texts)).encode()).hexdigest()
            for kind, texts in bodies.items()
        }
        kinds = set(digests) | set(self.digests)
        changed = frozenset(k for k in kinds if digests.get(k) != self.digests.get(k))
        self.digests = digests
        return changed


def alert_findings(alerts: Sequence[Mapping[str, Any]]) -> list[Finding]:
    """Firing critical alerts as findings on the Service (or namespace) they name."""
    out = []
    for alert in alerts:
        labels = alert.get("labels", {})
        if labels.get("severity") != "critical":
            continue
        namespace = str(labels.get("namespace", ""))
        name = str(labels.get("service") or labels.get("pod") or labels.get("alertname"))
        annotations = alert.get("annotations", {})
        out.append(
            Finding(
                detector=ALERTS_DETECTOR,
                rule=str(labels.get("alertname", "alert")),
                severity=Severity.CRITICAL,
                resource=Resource("Service", namespace, name),
                summary=str(annotations.get("summary", labels.get("alertname", "alert firing"))),
                evidence=str(annotations.get("description", "")),
            )
        )
    return sort_findings(out)
