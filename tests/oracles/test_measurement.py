"""The measurement loop: Argo Rollouts' evaluation and limits, on the fake clock."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import (
    AnalysisPhase,
    ConditionError,
    MetricSpec,
    Observation,
    ProbeResult,
    Reading,
    compile_condition,
    run_analysis,
    worst_phase,
)
from gitmedic.reconciler.oracles.metric import evaluate

A = AnalysisPhase
BOOM = RuntimeError("source down")


class Scripted:
    """An oracle whose measurements come from a script; exceptions are raised."""

    def __init__(self, name: str, spec: MetricSpec, values: Iterable[Any], clock: FakeClock):
        self.name, self.spec, self.clock = name, spec, clock
        self.values = list(values)
        self.at: list[float] = []

    def measure(self) -> Reading:
        self.at.append(self.clock.now())
        value = self.values[min(len(self.at), len(self.values)) - 1]
        if isinstance(value, Exception):
            raise value
        return Reading(value, Observation(probes=(ProbeResult(self.name, bool(value)),)))


def test_phase_order_and_worst() -> None:
    assert list(A) == [A.SUCCESSFUL, A.RUNNING, A.PENDING, A.INCONCLUSIVE, A.ERROR, A.FAILED]
    assert A.FAILED.is_worse(A.ERROR) and not A.RUNNING.is_worse(A.PENDING)
    assert worst_phase([A.SUCCESSFUL, A.ERROR, A.INCONCLUSIVE]) is A.ERROR
    assert worst_phase([]) is A.SUCCESSFUL


@pytest.mark.parametrize(
    ("success", "failure", "value", "phase"),
    [
        (None, None, 99, A.SUCCESSFUL),
        ("result < 5", None, 1, A.SUCCESSFUL),
        ("result < 5", None, 9, A.FAILED),
        (None, "result > 5", 9, A.FAILED),
        (None, "result > 5", 1, A.SUCCESSFUL),
        ("result < 2", "result > 5", 3, A.INCONCLUSIVE),
        ("result < 2", "result > 5", 1, A.SUCCESSFUL),
        ("result < 2", "result > 5", 7, A.FAILED),
        (lambda r: r["ok"], None, {"ok": True}, A.SUCCESSFUL),
    ],
)
def test_evaluate_like_argo(success: Any, failure: Any, value: Any, phase: AnalysisPhase) -> None:
    spec = MetricSpec(success_condition=success, failure_condition=failure)
    assert evaluate(spec, value) is phase


def test_expressions() -> None:
    cond = compile_condition('len(result["alerts"]) == 0 and result["rate"] >= 0.99')
    assert cond({"alerts": [], "rate": 1.0}) and not cond({"alerts": ["x"], "rate": 1.0})
    assert compile_condition("1 < result <= 3")(2) and not compile_condition("1 < result <= 3")(4)
    assert compile_condition("result in [200, 204] or not result")(204)
    assert compile_condition("max(result) - min(result) < 10 % 4")([3, 4])


@pytest.mark.parametrize(
    "bad",
    [
        "__import__('os').system('x')",
        "result.__class__",
        "open('f')",
        "[x for x in result]",
        "lambda: 1",
        "result is None",
        "result ** 99",
        "foo > 1",
        "result >",
    ],
)
def test_unsafe_or_broken_expressions_are_refused_at_configuration(bad: str) -> None:
    with pytest.raises(ConditionError):
        MetricSpec(failure_condition=bad)


def test_bad_spec_values_are_refused() -> None:
    with pytest.raises(ValueError, match="count >= 1"):
        MetricSpec(count=0)
    with pytest.raises(ValueError, match="negative"):
        MetricSpec(failure_limit=-1)


def test_a_window_of_five_measurements_runs_on_the_clock() -> None:
    clock = FakeClock(100.0)
    oracle = Scripted(
        "ok", MetricSpec(interval=30, count=5, success_condition="result"), [1], clock
    )
    result = run_analysis([oracle], clock)
    assert result.phase is A.SUCCESSFUL
    assert oracle.at == [100, 130, 160, 190, 220]
    assert (result.started, result.finished) == (100, 220) and clock.sleeps == [30] * 4


def test_failure_limit_and_early_stop() -> None:
    clock = FakeClock()
    spec = MetricSpec(interval=10, count=10, failure_condition="result > 0", failure_limit=1)
    failing = Scripted("bad", spec, [0, 1, 0, 1], clock)
    slow = Scripted("slow", MetricSpec(interval=60, count=5), [1], clock)
    result = run_analysis([failing, slow], clock)
    assert result.phase is A.FAILED and clock.now() == 30
    assert failing.at == [0, 10, 20, 30] and slow.at == [0]
    bad = result.metrics[0]
    assert bad.phase is A.FAILED and bad.message == "2 failed measurements (limit 1)"
    assert result.metrics[1].phase is A.RUNNING  # stopped: the verdict could not improve


def test_consecutive_errors_past_the_limit_are_an_error() -> None:
    clock = FakeClock()
    spec = MetricSpec(interval=5, count=20, consecutive_error_limit=2)
    oracle = Scripted("flaky", spec, [1, BOOM, BOOM, 1, BOOM, BOOM, BOOM], clock)
    result = run_analysis([oracle], clock)
    assert result.phase is A.ERROR and oracle.at[-1] == 30
    assert "3 consecutive errors: RuntimeError: source down" in result.metrics[0].message


def test_an_oracle_that_never_measured_never_passes() -> None:
    clock = FakeClock()
    oracle = Scripted("down", MetricSpec(interval=10, count=3), [BOOM], clock)
    result = run_analysis([oracle], clock)
    assert result.phase is A.ERROR and clock.now() == 20
    assert result.metrics[0].message.startswith("could not measure at the end")


def test_an_error_at_the_end_of_the_window_is_an_error() -> None:
    clock = FakeClock()
    oracle = Scripted("late", MetricSpec(interval=10, count=3), [1, 1, BOOM], clock)
    assert run_analysis([oracle], clock).phase is A.ERROR


def test_inconclusive_limit() -> None:
    clock = FakeClock()
    spec = MetricSpec(
        interval=1, count=4, success_condition="result == 0", failure_condition="result > 5",
        inconclusive_limit=1,
    )  # fmt: skip
    one = run_analysis([Scripted("a", spec, [0, 3, 0, 0], clock)], clock)
    assert one.phase is A.SUCCESSFUL
    two = run_analysis([Scripted("b", spec, [3, 0, 3], clock)], clock)
    assert two.phase is A.INCONCLUSIVE


def test_combination_is_the_worst_and_merges_observations() -> None:
    clock = FakeClock()
    good = Scripted("good", MetricSpec(interval=10, count=2), [1], clock)
    vague = Scripted(
        "vague",
        MetricSpec(interval=10, count=2, success_condition="result > 5", failure_condition="0"),
        [0],
        clock,
    )
    result = run_analysis([good, vague], clock)
    assert result.phase is A.INCONCLUSIVE
    assert [p.url for p in result.observation.probes] == ["good", "vague"]
    assert result.mu == 8.0  # the "vague" probe result is a failing probe


def test_duplicate_names_are_refused() -> None:
    clock = FakeClock()
    a = Scripted("x", MetricSpec(), [1], clock)
    with pytest.raises(ValueError, match="unique"):
        run_analysis([a, a], clock)
