"""The lock ``serve``'s monitor and comment commands share.

Why one lock: the monitor and a command both act on the same clone, forge and
journal, and a command must never see (or make) a step half done. The monitor
holds it for one tick only: a tick never waits (a transaction advances until its
next deadline and the tick returns; :meth:`gitmedic.bot.controller.loop.Loop.step`),
so a command queued during a tick runs right after it, before the next tick
(:class:`QueuedFirst`). Inside a tick the monitor still gives the lock away
between two steps of a transaction (each step is one action whose record is
already in the journal): :meth:`SharedLock.yield_to_waiters`, a no-op when no
command waits, so an idle service pays nothing; and before it runs the sim for
the time to the next tick (``serve --cluster sim``).

A command that arrives mid-tick therefore runs at the next step boundary and the
transaction's next step sees what it did (the hold label). Commands never step a
transaction and never wait: each records what it was asked (a label, an intent, a
plan) and runs to its end; the next tick acts on it. The journal's per-app writer
lock stays the guard against another process; this lock is only about the threads
of one process.

A yielding monitor lets every command already waiting go first, and takes the
lock back only when none waits; it re-fetches the clone then, as any first
acquisition does, since a command may have changed the remote meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager


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

    def enter_after_queued(self) -> None:
        """Acquire once every thread already queued has had its turn (the monitor's way)."""
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            self._cond.wait_for(lambda: self._owner is None and self._waiting == 0)
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


class QueuedFirst(AbstractContextManager[None]):
    """The monitor's side of a :class:`SharedLock`: a tick starts only when no command
    waits, so a command queued during a tick runs right after it, before the next one
    (ticks may follow each other at once while a transaction is in flight)."""

    def __init__(self, lock: SharedLock) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        self.lock.enter_after_queued()

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__()
