"""The detector oracle: critical findings firing on a fresh snapshot.

The snapshot comes from a function it is given (live cluster, sim); detectors
come from a registry (built-ins plus learned ones). Its result is
``{"critical", "findings": [fingerprints], "errors"}``; by default it fails on any
critical finding. A snapshot that cannot be taken, or a detector that fails on it,
raises (an Error measurement): a failed detector's findings are unknown, not absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gitmedic.detectors.finding import Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.oracles.metric import MetricSpec, Reading
from gitmedic.reconciler.oracles.observation import Observation

DEFAULT_SPEC = MetricSpec(failure_condition='result["critical"] > 0')


class DetectorOracle:
    def __init__(
        self,
        snapshot: Callable[[], Snapshot],
        detectors: Iterable[Detector],
        *,
        spec: MetricSpec = DEFAULT_SPEC,
        name: str = "detectors",
    ) -> None:
        self.snapshot = snapshot
        self.detectors = tuple(detectors)
        self.spec = spec
        self.name = name

    def measure(self) -> Reading:
        evaluation = run_detectors(self.detectors, self.snapshot())
        if evaluation.errors:
            raise RuntimeError("; ".join(evaluation.problems()))
        critical = [f for f in evaluation.findings if f.severity is Severity.CRITICAL]
        fingerprints = tuple(f.fingerprint for f in critical)
        result = {
            "critical": len(critical),
            "findings": list(fingerprints),
            "errors": [e.to_json() for e in evaluation.errors],
        }
        notes = tuple(f"{f.detector}: {f.summary}" for f in critical)
        return Reading(result, Observation(critical_findings=fingerprints, notes=notes))
