"""The lock serve's monitor shares with commands: yielded between steps and around idle waits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gitmedic.bot.serve_lock import SharedLock, YieldingClock
from gitmedic.reconciler.clock import FakeClock

BOUND_S = 10.0  # every wait below is bounded; a hang fails the test instead


def wait_until(condition: Callable[[], bool], timeout: float = BOUND_S) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0)  # a yield to the threads under test, not a wait (a unit test)
    return True


def command(lock: SharedLock, order: list[str]) -> threading.Thread:
    def run() -> None:
        with lock:
            order.append("command")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_queued_command_runs_at_the_next_yield_and_the_monitor_keeps_its_depth() -> None:
    lock, order = SharedLock(), []
    with lock, lock:  # the monitor's step, and a step inside it
        thread = command(lock, order)
        assert wait_until(lambda: lock.waiting == 1)
        assert order == [], "the command waits while the step runs"
        lock.yield_to_waiters()
        order.append("monitor")
    thread.join(BOUND_S)
    assert order == ["command", "monitor"]
    with lock:  # released as deeply as it was taken: free again
        pass


def test_a_yield_with_no_command_waiting_keeps_the_lock_and_fetches_nothing() -> None:
    fetches: list[int] = []
    lock = SharedLock(lambda: fetches.append(1))
    with lock:
        lock.yield_to_waiters()
        assert lock.waiting == 0
    assert fetches == [1], "only the first acquisition fetched"


def test_taking_the_lock_back_after_a_yield_fetches_again() -> None:
    fetches: list[int] = []
    lock, order = SharedLock(lambda: fetches.append(1)), []
    with lock:
        thread = command(lock, order)
        assert wait_until(lambda: lock.waiting == 1)
        lock.yield_to_waiters()
    thread.join(BOUND_S)
    assert len(fetches) == 3, "monitor, command, monitor again: a command may move the remote"


class WaitingClock(FakeClock):
    """A fake clock whose sleep lasts until the test wakes it (as a real wait would)."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self.asleep, self.wake = threading.Event(), threading.Event()

    def sleep(self, seconds: float) -> None:
        self.asleep.set()
        assert self.wake.wait(BOUND_S), "nobody woke the sleeper"
        super().sleep(seconds)


def test_an_idle_sleep_gives_the_lock_up_for_its_whole_length() -> None:
    lock, inner, order = SharedLock(), WaitingClock(), []
    clock = YieldingClock(inner, lock, idle_sleep=True)

    def monitor() -> None:
        with lock:
            clock.sleep(30)
            order.append("monitor")

    thread = threading.Thread(target=monitor, daemon=True)
    thread.start()
    assert inner.asleep.wait(BOUND_S)
    with lock:  # taken while the monitor sleeps, not after
        order.append("command")
    inner.wake.set()
    thread.join(BOUND_S)
    assert order == ["command", "monitor"] and inner.now() == 30


def test_a_working_sleep_lets_queued_commands_in_first_then_runs_holding_the_lock() -> None:
    lock, order = SharedLock(), []

    class SimLikeClock(FakeClock):
        def sleep(self, seconds: float) -> None:
            order.append(f"sim runs, lock held by the monitor: {lock.waiting == 0}")
            super().sleep(seconds)

    clock = YieldingClock(SimLikeClock(), lock, idle_sleep=False)
    with lock:
        thread = command(lock, order)
        assert wait_until(lambda: lock.waiting == 1)
        clock.sleep(30)
    thread.join(BOUND_S)
    assert order == ["command", "sim runs, lock held by the monitor: True"]
