"""Verification: the oracles over a bounded window after a change is deployed.

Runs the configured oracles (cluster state, alerts, probes, detectors) with
``run_analysis`` on the injected clock, scores the combined observation with
mu, checks whether the transaction's target findings still fire, and notices
when someone else's change to the app landed during the window (then no verdict
about *this* change can be trusted: Inconclusive).

A change is judged as Argo Rollouts judges one: the first failed measurement
ends the window. A revert that brought the checkpoint's tree back (``restoring``)
is judged by mu at the end of the whole window instead: right after a revert is
applied its pods are still rolling back, so an early reading is not the state
it restores, and the transaction compares that state's mu with mu before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.oracles import (
    AnalysisPhase,
    MetricResult,
    Observation,
    Oracle,
    Reading,
    recorded,
    run_analysis,
)
from gitmedic.reconciler.transaction.model import Plan
from gitmedic.reconciler.transaction.ports import Verdict, VerdictPhase

_PHASES = {
    AnalysisPhase.SUCCESSFUL: VerdictPhase.SUCCESSFUL,
    AnalysisPhase.FAILED: VerdictPhase.FAILED,
    AnalysisPhase.ERROR: VerdictPhase.ERROR,
}


class OracleVerifier:
    def __init__(
        self,
        oracles: Callable[[], Sequence[Oracle]],
        clock: Clock,
        live_findings: Callable[[], Sequence[Finding]],
        *,
        interfered: Callable[[str], bool] = lambda sha: False,
    ) -> None:
        self.oracles = oracles
        self.clock = clock
        self.live_findings = live_findings
        self.interfered = interfered

    def baselines(self) -> dict[str, dict[str, int] | None]:
        """The checkpoint readings of the oracles, for the plan to record."""
        return recorded(self.oracles())

    def verify(self, plan: Plan, deployed_sha: str, *, restoring: bool = False) -> Verdict:
        oracles = self.oracles()
        if restoring:
            oracles = [_WholeWindow(o) for o in oracles]
        result = run_analysis(oracles, self.clock)
        firing = {f.fingerprint for f in self.live_findings()}
        still = sorted(set(plan.targets) & firing)
        phase = _PHASES.get(result.phase, VerdictPhase.INCONCLUSIVE)
        seconds = result.finished - result.started
        summary = f"oracles {result.phase.value} after {seconds:g}s, mu {result.mu:g}"
        return Verdict(
            phase=phase,
            mu=result.mu,
            targets_cleared=not still,
            summary=summary,
            findings=feedback(result.observation, still, result.metrics),
            interfered=self.interfered(deployed_sha),
        )


class _WholeWindow:
    """An oracle measured for its whole window with no condition: only its readings count
    (an oracle that cannot measure still ends Error)."""

    def __init__(self, inner: Oracle) -> None:
        self.inner = inner
        self.name = inner.name
        self.spec = replace(inner.spec, success_condition=None, failure_condition=None)

    def measure(self) -> Reading:
        return self.inner.measure()


def feedback(
    observation: Observation,
    still_firing: Sequence[str],
    metrics: Sequence[MetricResult] = (),
) -> tuple[str, ...]:
    """What the oracles saw, one line each: the retry's feedback and the PR's evidence.

    First what made an oracle fail (what got worse, for an oracle judged against
    its baseline) or kept it from a verdict, then everything wrong that was seen.
    """
    lines = [line for m in metrics for line in _verdict_lines(m)]
    lines += [
        f"alert {a.name} firing" + (f" ({a.severity})" if a.severity else "")
        for a in observation.alerts
    ]
    lines += [
        f"probe {p.url} failing: {p.message or p.status}" for p in observation.probes if not p.ok
    ]
    lines += [
        f"{c.resource}: {c.unavailable} of {c.desired} replicas unavailable"
        for c in observation.capacity
        if c.unavailable
    ]
    lines += [f"{ref} is Degraded, Missing or Unknown" for ref in observation.degraded]
    lines += [f"critical finding {fp} firing" for fp in observation.critical_findings]
    lines += [f"target finding {fp} still firing" for fp in still_firing]
    return tuple(lines)


def _verdict_lines(metric: MetricResult) -> list[str]:
    if metric.phase is AnalysisPhase.FAILED:
        failed = [m for m in metric.measurements if m.phase is AnalysisPhase.FAILED]
        result = failed[-1].result if failed else None
        worse = result.get("worse") if isinstance(result, Mapping) else None
        if isinstance(worse, list) and worse:
            return [f"{metric.name} got worse: {w}" for w in worse]
        return [f"{metric.name} failed: {metric.message}"]
    if metric.phase in (AnalysisPhase.ERROR, AnalysisPhase.INCONCLUSIVE):
        return [f"{metric.name} {metric.phase.value.lower()}: {metric.message}"]
    return []
