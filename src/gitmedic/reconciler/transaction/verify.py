"""Verification: the oracles over a bounded window after a change is deployed.

The window is measurements (:mod:`~gitmedic.reconciler.transaction.window`):
:meth:`OracleVerifier.measure` takes one now, every configured oracle (cluster
state, alerts, probes, detectors) once, scored together with mu, with the
findings firing and the critical signals; :meth:`OracleVerifier.window` judges
the recorded measurements by the oracles' specs (count and limits, by Argo's
rules; one measurement of every oracle per their shortest interval): still open,
with the next one due, or a verdict: the oracles' worst phase, mu of the last
measurement, whether the transaction's target findings still fire. Whether
someone else's change to the app landed during the window (then no verdict about
*this* change can be trusted: Inconclusive) is the ports' to tell.

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
    severity,
    worst_phase,
)
from gitmedic.reconciler.oracles.metric import Measurement as MetricMeasurement
from gitmedic.reconciler.oracles.metric import assess, measure_once
from gitmedic.reconciler.transaction.model import Plan
from gitmedic.reconciler.transaction.ports import Verdict, VerdictPhase, WindowAnswer
from gitmedic.reconciler.transaction.window import Measurement, OracleMark, Signal, Stage

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
        signals: Callable[[Sequence[Finding]], Sequence[Signal]] = lambda findings: (),
    ) -> None:
        self.oracles = oracles
        self.clock = clock
        self.live_findings = live_findings
        self.signals = signals  # the critical findings and alerts firing, with their objects

    def baselines(self) -> dict[str, dict[str, int] | None]:
        """The checkpoint readings of the oracles, for the plan to record."""
        return recorded(self.oracles())

    def measure(self, deployed_sha: str, stage: Stage, *, restoring: bool = False) -> Measurement:
        """One measurement now (no wait): the signals, and in the window every oracle once."""
        at = self.clock.now()
        findings = list(self.live_findings())
        signals = tuple(self.signals(findings))
        if stage is Stage.SYNC:
            return Measurement(at, stage, deployed_sha, signals)
        marks, observation = _round(self._oracles(restoring), at)
        return Measurement(
            at,
            stage,
            deployed_sha,
            signals,
            marks,
            mu=severity(observation),
            seen=feedback(observation, ()),
            firing=tuple(sorted({f.fingerprint for f in findings})),
        )

    def window(
        self, plan: Plan, measurements: Sequence[Measurement], *, restoring: bool = False
    ) -> WindowAnswer:
        """The window judged from its recorded measurements alone (Argo's rules, folded
        by :func:`~gitmedic.reconciler.oracles.metric.assess`): closed once every oracle
        completed or one failed, else open with its next measurement due."""
        oracles = self._oracles(restoring)
        metrics = [_metric(o, measurements) for o in oracles]
        done = all(m.phase.completed for m in metrics) or any(
            m.phase is AnalysisPhase.FAILED for m in metrics
        )
        if not done:
            interval = min(o.spec.interval for o in oracles)
            return WindowAnswer(None, measurements[-1].at + interval if measurements else 0.0)
        return WindowAnswer(_verdict(plan, metrics, measurements))

    def _oracles(self, restoring: bool) -> list[Oracle]:
        oracles = list(self.oracles())
        names = [o.name for o in oracles]
        if len(set(names)) != len(names):  # a measurement's marks are told apart by name
            raise ValueError(f"oracle names must be unique: {names}")
        return [_WholeWindow(o) for o in oracles] if restoring else oracles


def _round(oracles: Sequence[Oracle], at: float) -> tuple[tuple[OracleMark, ...], Observation]:
    """Every oracle measured once: its mark, and what they saw together."""
    marks, observation = [], Observation()
    for oracle in oracles:
        taken = measure_once(oracle, MetricResult(oracle.name), at)
        last = taken.measurements[-1]
        worse = last.result.get("worse") if isinstance(last.result, Mapping) else None
        marks.append(OracleMark(oracle.name, last.phase.value, tuple(worse or ()), last.message))
        if taken.last is not None:
            observation = observation.merge(taken.last.observation)
    return tuple(marks), observation


def _metric(oracle: Oracle, measurements: Sequence[Measurement]) -> MetricResult:
    """One oracle's metric folded from its marks, up to where it completed."""
    metric = MetricResult(oracle.name)
    for m in measurements:
        mark = next((k for k in m.marks if k.oracle == oracle.name), None)
        if mark is None or metric.phase.completed:
            continue
        phase = AnalysisPhase(mark.phase)
        errors = metric.consecutive_errors + 1 if phase is AnalysisPhase.ERROR else 0
        taken = MetricMeasurement(phase, m.at, {"worse": list(mark.worse)}, mark.message)
        metric = replace(
            metric, measurements=(*metric.measurements, taken), consecutive_errors=errors
        )
        phase, message = assess(oracle.spec, metric)
        metric = replace(metric, phase=phase, message=message)
    return metric


def _verdict(
    plan: Plan, metrics: Sequence[MetricResult], measurements: Sequence[Measurement]
) -> Verdict:
    phase = worst_phase(m.phase for m in metrics)
    last = measurements[-1] if measurements else None
    mu = last.mu if last is not None else 0.0
    firing = set(last.firing if last is not None else ())
    still = sorted(set(plan.targets) & firing)
    seconds = last.at - measurements[0].at if last is not None else 0.0
    lines = [line for m in metrics for line in _verdict_lines(m)]
    lines += [*(last.seen if last is not None else ()), *_still_lines(still)]
    return Verdict(
        phase=_PHASES.get(phase, VerdictPhase.INCONCLUSIVE),
        mu=mu,
        targets_cleared=not still,
        summary=f"oracles {phase.value} after {seconds:g}s, mu {mu:g}",
        findings=tuple(lines),
        cleared=tuple(sorted(set(plan.targets) - firing)) if last is not None else (),
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
    lines += _still_lines(still_firing)
    return tuple(lines)


def _still_lines(still_firing: Sequence[str]) -> list[str]:
    return [f"target finding {fp} still firing" for fp in still_firing]


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
