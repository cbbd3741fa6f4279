"""serve's liveness: progress beats, a stall past the limit fails /healthz, failures are no beat."""

from __future__ import annotations

import threading

import pytest

from gitmedic.bot.service.health import Heartbeat
from gitmedic.bot.service.wiring import MonitorThread


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_quiet_past_the_limit_is_a_stall_and_a_beat_ends_it() -> None:
    clock = Clock()
    heart = Heartbeat(interval_s=60, stall_intervals=5, clock=clock)
    clock.t += 300
    assert heart.stalled() is None  # exactly the limit: still alive
    clock.t += 1
    reason = heart.stalled()
    assert reason is not None and "no progress for 301s (limit 300s" in reason
    heart.beat()
    assert heart.stalled() is None


def test_the_limits_must_make_sense() -> None:
    with pytest.raises(ValueError):
        Heartbeat(interval_s=0)
    with pytest.raises(ValueError):
        Heartbeat(interval_s=60, stall_intervals=0.5)


def test_a_step_that_completes_is_a_pass_and_one_that_raises_is_not() -> None:
    clock = Clock()
    heart = Heartbeat(interval_s=10, stall_intervals=2, clock=clock)
    outcomes = iter([None, RuntimeError("journal locked")])

    def step() -> None:
        failure = next(outcomes)
        if failure is not None:
            raise failure

    monitor = MonitorThread(step, 10, threading.Lock(), heart)
    clock.t += 15
    monitor.step_once()
    assert heart.passes == 1 and heart.stalled() is None
    clock.t += 25
    monitor.step_once()  # raised: logged, and no beat
    assert heart.passes == 1 and monitor.steps == 2
    assert heart.stalled() is not None
