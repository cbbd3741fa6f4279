"""Oracles measured Argo-Rollouts style: a measurement judged, a metric assessed.

An oracle takes one measurement per ``interval`` up to ``count`` times. Each
measurement is judged by its conditions (Argo's ``evaluateResult``): with both a
success and a failure condition, neither true is Inconclusive; with only one,
the other is its negation; with none, any value is Successful. A measurement that
raises is an Error.

The metric's phase after each measurement (Argo's ``assessMetricStatus``):
Failed once more than ``failure_limit`` measurements failed; Inconclusive once
more than ``inconclusive_limit`` were; Error once more than
``consecutive_error_limit`` errors came in a row; after ``count`` measurements
Successful, except that a metric whose last measurement was an error is Error
(our rule, stricter than Argo's: an oracle that could not see at the end of the
window, such as an Alertmanager that is down, never passes). Otherwise Running.

Nothing here waits: :func:`measure_once` takes one measurement when its caller
says it is due. The verification window
(:mod:`~gitmedic.reconciler.transaction.verify`) takes one measurement of every
oracle per step of a transaction, journaled, and folds them with :func:`assess`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gitmedic.reconciler.oracles.expr import Condition, Predicate, compile_condition
from gitmedic.reconciler.oracles.observation import Observation
from gitmedic.reconciler.oracles.phase import AnalysisPhase

P = AnalysisPhase


@dataclass(frozen=True)
class MetricSpec:
    interval: float = 10.0
    count: int = 1
    success_condition: Condition | None = None
    failure_condition: Condition | None = None
    failure_limit: int = 0
    consecutive_error_limit: int = 4
    inconclusive_limit: int = 0

    def __post_init__(self) -> None:
        if self.count < 1 or self.interval <= 0:
            raise ValueError(f"need count >= 1 and interval > 0, got {self.count}, {self.interval}")
        if min(self.failure_limit, self.consecutive_error_limit, self.inconclusive_limit) < 0:
            raise ValueError("limits must not be negative")
        self.predicates()  # a bad expression is refused at configuration time

    def predicates(self) -> tuple[Predicate | None, Predicate | None]:
        success, failure = self.success_condition, self.failure_condition
        return (
            None if success is None else compile_condition(success),
            None if failure is None else compile_condition(failure),
        )


@dataclass(frozen=True)
class Reading:
    """One measurement's raw value (what conditions see) and its part of the observation."""

    result: Any
    observation: Observation = field(default_factory=Observation)


class Oracle(Protocol):
    name: str
    spec: MetricSpec

    def measure(self) -> Reading: ...


@dataclass(frozen=True)
class Measurement:
    phase: AnalysisPhase
    at: float
    result: Any = None
    message: str = ""


@dataclass(frozen=True)
class MetricResult:
    name: str
    phase: AnalysisPhase = P.PENDING
    measurements: tuple[Measurement, ...] = ()
    consecutive_errors: int = 0
    last: Reading | None = None
    message: str = ""

    def count(self, phase: AnalysisPhase) -> int:
        return sum(1 for m in self.measurements if m.phase is phase)


def evaluate(spec: MetricSpec, result: Any) -> AnalysisPhase:
    """A measured value's phase under the spec's conditions (may raise: an Error)."""
    success, failure = spec.predicates()
    if success is None and failure is None:
        return P.SUCCESSFUL
    ok = success(result) if success is not None else None
    bad = failure(result) if failure is not None else None
    if bad is None:
        bad = not ok
    if ok is None:
        ok = not bad
    if bad:
        return P.FAILED
    return P.SUCCESSFUL if ok else P.INCONCLUSIVE


def assess(spec: MetricSpec, m: MetricResult) -> tuple[AnalysisPhase, str]:
    if m.count(P.FAILED) > spec.failure_limit:
        return P.FAILED, f"{m.count(P.FAILED)} failed measurements (limit {spec.failure_limit})"
    if m.count(P.INCONCLUSIVE) > spec.inconclusive_limit:
        return P.INCONCLUSIVE, f"{m.count(P.INCONCLUSIVE)} inconclusive measurements"
    if m.consecutive_errors > spec.consecutive_error_limit:
        return P.ERROR, f"{m.consecutive_errors} consecutive errors: {m.measurements[-1].message}"
    if len(m.measurements) >= spec.count:
        if m.consecutive_errors:
            return P.ERROR, f"could not measure at the end: {m.measurements[-1].message}"
        return P.SUCCESSFUL, f"{len(m.measurements)} measurements"
    return P.RUNNING, ""


def measure_once(oracle: Oracle, m: MetricResult, at: float) -> MetricResult:
    """Take one measurement and re-assess the metric."""
    try:
        reading = oracle.measure()
        phase = evaluate(oracle.spec, reading.result)
        taken = Measurement(phase, at, reading.result)
        m = replace(m, last=reading, consecutive_errors=0)
    except Exception as err:  # an oracle's failure to measure is data (an Error), never a crash
        taken = Measurement(P.ERROR, at, None, f"{type(err).__name__}: {err}")
        m = replace(m, consecutive_errors=m.consecutive_errors + 1)
    m = replace(m, measurements=(*m.measurements, taken))
    phase, message = assess(oracle.spec, m)
    return replace(m, phase=phase, message=message)
