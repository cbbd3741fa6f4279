"""The lock ``serve``'s monitor and comment commands share, and how the monitor yields it.

Why one lock: the monitor and a command both act on the same clone, forge and
journal, and a command must never see (or make) a step half done. Why yielding:
the monitor drives an incident's whole transaction (PR, gate, merge, sync wait,
verification window) in one call, which can take many minutes; held throughout,
the lock would keep a person's ``/gitmedic hold`` waiting until the merge it was
meant to stop had happened. So the monitor gives the lock away at the points
where nothing is half done:

- between two steps of a transaction (each step is one action whose record is
  already in the journal): :meth:`SharedLock.yield_to_waiters`, a no-op when no
  command waits, so an idle service pays nothing;
- while it waits on its clock (a sync poll, an oracle's interval in the
  verification window, the only long step): :class:`YieldingClock`.

A command that arrives mid-transaction therefore runs at the next step boundary
and the transaction's next step sees what it did (the hold label). Commands
never yield: each runs to its end, as before. The journal's per-app writer lock
(:meth:`Journal.acquire`) stays the guard against another process; this lock is
only about the threads of one process.

A yielding monitor lets every command already waiting go first, and takes the
lock back only when none waits; it re-fetches the clone then, as any first
acquisition does, since a command may have changed the remote meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from gitmedic.reconciler.clock import Clock


class SharedLock(AbstractContextManager[None]):
    """Re-entrant; the first (not re-entrant) acquisition calls ``fetch`` (the clone's)."""

    def __init__(self, fetch: Callable[[], object] = lambda: None) -> None:
        self.fetch = fetch
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._waiting = 0  # threads blocked in __enter__: commands (or the monitor) queued

    @property
    def waiting(self) -> int:
        with self._cond:
            return self._waiting

    def __enter__(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            self._waiting += 1
            self._cond.wait_for(lambda: self._owner is None)
            self._waiting -= 1
            self._owner, self._depth = me, 1
        self._fetched()

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("released by a thread that does not hold it")
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def yield_to_waiters(self) -> None:
        """Between two steps: let every queued command run, then carry on."""
        if self.waiting:
            with self.released():
                pass

    @contextmanager
    def released(self) -> Iterator[None]:
        """Give the lock up entirely (however deeply held) for the block, then take it back."""
        me = threading.get_ident()
        with self._cond:
            if self._owner != me:  # not ours (a caller outside serve's monitor): nothing to give
                depth = 0
            else:
                depth, self._owner, self._depth = self._depth, None, 0
                self._cond.notify_all()
        try:
            yield
        finally:
            if depth:
                self._take_back(me, depth)

    def _take_back(self, me: int, depth: int) -> None:
        with self._cond:
            # Queued commands first: the monitor is the one that can wait.
            self._cond.wait_for(lambda: self._owner is None and self._waiting == 0)
            self._owner, self._depth = me, depth
        # A failed fetch propagates with the lock held as deep as before: the
        # caller's own ``with`` blocks release it as they unwind.
        self.fetch()

    def _fetched(self) -> None:
        try:
            self.fetch()
        except BaseException:
            self.__exit__()
            raise


class YieldingClock:
    """A clock whose sleeps let queued commands in first.

    ``idle_sleep``: the inner clock's sleep only waits (the system clock), so the
    lock is given up for the whole sleep. When sleeping *does* work on shared
    state (the sim's clock runs the simulated cluster, which commands read to
    measure mu) the lock is yielded before the sleep and held during it: that
    costs a command one sleep's computation, never a wall-clock wait.
    """

    def __init__(
        self,
        inner: Clock,
        lock: SharedLock,
        *,
        idle_sleep: bool,
        on_wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.inner, self.lock, self.idle_sleep = inner, lock, idle_sleep
        self.on_wake = on_wake  # a wait that returned is progress (serve's liveness)

    def now(self) -> float:
        return self.inner.now()

    def sleep(self, seconds: float) -> None:
        if not self.idle_sleep:
            self.lock.yield_to_waiters()
            self.inner.sleep(seconds)
        else:
            with self.lock.released():
                self.inner.sleep(seconds)
        self.on_wake()

    def elapse(self, seconds: float) -> None:
        """The monitor's interval on this clock: run it when sleeping is work, else nothing.

        The sim's time passes only when its clock is slept on, so the monitor has
        it run the interval it waits between two steps. A real cluster's time
        passes by itself and the monitor already waits the interval on wall time
        between steps: sleeping it here too would wait twice.
        """
        if not self.idle_sleep:
            self.sleep(seconds)
