"""Measurements judged by Argo Rollouts' evaluation and limits, in the verification window
stepped on the fake clock (one measurement of every oracle per step, as a transaction takes it)."""

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
    worst_phase,
)
from gitmedic.reconciler.oracles.metric import evaluate
from gitmedic.reconciler.transaction import VerdictPhase
from tests.support.stepping import window

A = AnalysisPhase
V = VerdictPhase
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
    result = window([oracle], clock)
    assert result.verdict.phase is V.SUCCESSFUL
    assert oracle.at == [100, 130, 160, 190, 220]
    assert [m.at for m in result.measurements] == [100, 130, 160, 190, 220]
    assert result.waits == (30,) * 4 and clock.sleeps == []  # the window itself never sleeps


def test_failure_limit_and_early_stop() -> None:
    clock = FakeClock()
    spec = MetricSpec(interval=10, count=10, failure_condition="result > 0", failure_limit=1)
    failing = Scripted("bad", spec, [0, 1, 0, 1], clock)
    slow = Scripted("slow", MetricSpec(interval=60, count=5), [1], clock)
    result = window([failing, slow], clock)
    assert result.verdict.phase is V.FAILED and clock.now() == 30
    # Every measurement of the window measures every oracle, at the oracles' shortest
    # interval: "slow" too, which had not completed its count of 5 when "bad" failed.
    assert failing.at == [0, 10, 20, 30] and slow.at == [0, 10, 20, 30]
    assert result.marks("bad") == ["Successful", "Failed", "Successful", "Failed"]
    assert result.verdict.findings == ("bad failed: 2 failed measurements (limit 1)",)
    # stopped: the verdict could not improve, though "slow" was still Running (4 of 5)


def test_consecutive_errors_past_the_limit_are_an_error() -> None:
    clock = FakeClock()
    spec = MetricSpec(interval=5, count=20, consecutive_error_limit=2)
    oracle = Scripted("flaky", spec, [1, BOOM, BOOM, 1, BOOM, BOOM, BOOM], clock)
    result = window([oracle], clock)
    assert result.verdict.phase is V.ERROR and oracle.at[-1] == 30
    assert "flaky error: 3 consecutive errors: RuntimeError: source down" in (
        result.verdict.findings
    )


def test_an_oracle_that_never_measured_never_passes() -> None:
    clock = FakeClock()
    oracle = Scripted("down", MetricSpec(interval=10, count=3), [BOOM], clock)
    result = window([oracle], clock)
    assert result.verdict.phase is V.ERROR and clock.now() == 20
    assert result.verdict.findings[0].startswith("down error: could not measure at the end")


def test_an_error_at_the_end_of_the_window_is_an_error() -> None:
    clock = FakeClock()
    oracle = Scripted("late", MetricSpec(interval=10, count=3), [1, 1, BOOM], clock)
    assert window([oracle], clock).verdict.phase is V.ERROR


def test_inconclusive_limit() -> None:
    clock = FakeClock()
    spec = MetricSpec(
        interval=1, count=4, success_condition="result == 0", failure_condition="result > 5",
        inconclusive_limit=1,
    )  # fmt: skip
    one = window([Scripted("a", spec, [0, 3, 0, 0], clock)], clock)
    assert one.verdict.phase is V.SUCCESSFUL
    two = window([Scripted("b", spec, [3, 0, 3], clock)], clock)
    assert two.verdict.phase is V.INCONCLUSIVE


def test_combination_is_the_worst_and_merges_observations() -> None:
    clock = FakeClock()
    # "good" passes (no condition) though its probe fails: its observation still counts.
    good = Scripted("good", MetricSpec(interval=10, count=2), [0], clock)
    vague = Scripted(
        "vague",
        MetricSpec(interval=10, count=2, success_condition="result > 5", failure_condition="0"),
        [0],
        clock,
    )
    result = window([good, vague], clock)
    assert result.verdict.phase is V.INCONCLUSIVE
    assert result.marks("good") == ["Successful"] * 2
    last = result.measurements[-1]
    assert [line.split(" failing")[0] for line in last.seen] == ["probe good", "probe vague"]
    assert result.verdict.mu == 16.0  # both failing probes, merged into one observation


def test_duplicate_names_are_refused() -> None:
    clock = FakeClock()
    a = Scripted("x", MetricSpec(), [1], clock)
    with pytest.raises(ValueError, match="unique"):
        window([a, a], clock)
