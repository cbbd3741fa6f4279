"""The lock serve's monitor shares with commands: yielded between steps, and a tick waits
for the commands queued during the last one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gitmedic.bot.service.lock import QueuedFirst, SharedLock

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


def test_a_tick_starts_only_after_the_commands_queued_during_the_last_one() -> None:
    """Ticks may follow at once while a transaction is in flight: a command queued during
    one still runs before the next (the monitor takes its turn last)."""
    lock, order = SharedLock(), []
    monitor = QueuedFirst(lock)
    with monitor:  # a tick
        thread = command(lock, order)
        assert wait_until(lambda: lock.waiting == 1)
        order.append("tick 1")
    with monitor:  # the next tick, at once
        order.append("tick 2")
    thread.join(BOUND_S)
    assert order == ["tick 1", "command", "tick 2"]
