"""wait_deployed: polls on the injected clock, stops on a verdict, and gives up
exactly at the timeout."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.sync import SyncPhase, SyncState, wait_deployed

P, D, F, U = SyncPhase.PROGRESSING, SyncPhase.DEPLOYED, SyncPhase.FAILED, SyncPhase.UNKNOWN


class Scripted:
    """A watcher that answers from a script (the last answer repeats) and logs when it was asked."""

    def __init__(self, clock: FakeClock, phases: Iterable[SyncPhase]) -> None:
        self.clock = clock
        self.phases = list(phases)
        self.asked: list[float] = []

    def check(self, sha: str) -> SyncState:
        self.asked.append(self.clock.now())
        phase = self.phases[min(len(self.asked), len(self.phases)) - 1]
        return SyncState(phase, f"{phase.value} at {self.clock.now():g}", sha, self.clock.now())


def test_deployed_on_the_third_check() -> None:
    clock = FakeClock(1000.0)
    watcher = Scripted(clock, [P, U, D])
    result = wait_deployed(watcher, "abc1234", clock, timeout=300, interval=10)
    assert result.deployed and not result.timed_out
    assert watcher.asked == [1000, 1010, 1020]
    assert (result.waited, result.checks) == (20, 3)


def test_timeout_is_exact_and_the_last_sleep_is_cut_short() -> None:
    clock = FakeClock()
    watcher = Scripted(clock, [P])
    result = wait_deployed(watcher, "abc1234", clock, timeout=100, interval=30)
    assert result.timed_out and not result.deployed
    assert clock.now() == 100 and result.waited == 100
    assert clock.sleeps == [30, 30, 30, 10]
    assert watcher.asked == [0, 30, 60, 90, 100]
    assert result.state.phase is P
    assert result.state.message == "timed out after 100s: Progressing at 100"


def test_failed_ends_the_wait_at_once() -> None:
    clock = FakeClock()
    result = wait_deployed(Scripted(clock, [P, F]), "abc1234", clock, timeout=600, interval=5)
    assert result.state.phase is F and not result.timed_out
    assert clock.sleeps == [5]


def test_unknown_is_retried_until_the_deadline() -> None:
    clock = FakeClock()
    result = wait_deployed(Scripted(clock, [U]), "abc1234", clock, timeout=60, interval=15)
    assert result.timed_out and result.state.phase is U and result.checks == 5
    assert clock.now() == 60


def test_zero_timeout_checks_once() -> None:
    clock = FakeClock()
    result = wait_deployed(Scripted(clock, [P]), "abc1234", clock, timeout=0, interval=5)
    assert result.checks == 1 and result.timed_out and clock.sleeps == []


def test_a_slow_check_counts_against_the_timeout() -> None:
    clock = FakeClock()

    class Slow(Scripted):
        def check(self, sha: str) -> SyncState:
            self.clock.advance(7)  # e.g. an HTTP request that took 7 s
            return super().check(sha)

    watcher = Slow(clock, [P])
    result = wait_deployed(watcher, "abc1234", clock, timeout=20, interval=5)
    # checks end at 7, 19 (after a 5 s sleep) and 27 (after sleeping the 1 s left):
    # the sleeps never pass the deadline; a check in flight at the deadline is finished.
    assert watcher.asked == [7, 19, 27] and clock.sleeps == [5, 1]
    assert result.timed_out and result.waited == 27


def test_bad_arguments_are_refused() -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="interval > 0"):
        wait_deployed(Scripted(clock, [P]), "abc1234", clock, timeout=10, interval=0)
    with pytest.raises(ValueError, match="timeout >= 0"):
        wait_deployed(Scripted(clock, [P]), "abc1234", clock, timeout=-1, interval=1)
