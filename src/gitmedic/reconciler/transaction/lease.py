"""The app's writer lease as one process holds it: a holder id per process, renewed as it runs.

Every process gets its own holder id, ``<host>:<pid>:<random>``, so two processes on
one journal never both think they hold an app (a fixed name would let both in).
The lease lives in the journal with an expiry on the wall clock (processes share
no other clock; the sim's clock restarts with each process). A holder on this
host whose process is gone is dead at once, so a restarted ``gitmedic run`` takes
over the lease its SIGKILLed predecessor left without waiting for it to expire;
a holder on another host (or of another format) is trusted until its lease
expires. More than one replica on different hosts needs the lease somewhere all
of them see (see README, "Running more than one replica"): the loop takes any
:class:`WriterLease`, and ``serve --shard-leases`` gives it one backed by the app's
Kubernetes Lease (:mod:`gitmedic.reconciler.leases.app_lease`).

A holder asks for it at every step, and the journal's row is read each time (one
taken from it, as a shard's fenced row is, is seen at once), but written only when a
third of the TTL has passed since the last renewal, as client-go renews a Lease at
its retry period rather than at every reconcile: a read commits nothing, where a
renewal is a durable write (an fsync of SQLite's log), and one process stepping 1,000
apps wrote 1,000 of them per tick. The lease thus runs at least two thirds of its
TTL past the last step.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from gitmedic.reconciler.transaction.journal import Journal, LockGrant

DEFAULT_TTL_S = 120.0


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def dead_on_this_host(holder: str, host: str | None = None) -> bool:
    """Is ``holder`` a process of this host that no longer runs?"""
    parts = holder.split(":")
    if len(parts) != 3 or parts[0] != (host or socket.gethostname()) or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it runs, as another user
        return False
    return False


class WriterLease(Protocol):
    """Who may write an app's journal: the journal's own lease (:class:`Lease`), or one
    backed by a Kubernetes Lease (:mod:`gitmedic.reconciler.leases.app_lease`)."""

    @property
    def holder(self) -> str: ...

    def hold(self) -> LockGrant:
        """Take or renew it; a refused grant names the holder."""
        ...

    def release(self) -> None: ...


@dataclass
class Lease:
    journal: Journal
    app: str
    holder: str
    ttl_s: float = DEFAULT_TTL_S
    clock: Callable[[], float] = time.time
    dead: Callable[[str], bool] = dead_on_this_host

    # until when (our clock) the last renewal stands without writing: a third of the TTL
    _fresh_until: float = field(default=float("-inf"), init=False, repr=False, compare=False)

    def hold(self) -> LockGrant:
        """Take or renew the lease (one row, written at most every third of the TTL);
        a refused grant names the holder."""
        now = self.clock()
        if now < self._fresh_until and self._still_mine(now):
            return LockGrant(True, self.holder)
        grant = self.journal.acquire(self.app, self.holder, now, self.ttl_s, dead=self.dead)
        self._fresh_until = now + self.ttl_s / 3 if grant.acquired else float("-inf")
        return grant

    def _still_mine(self, now: float) -> bool:
        row = self.journal.lock_of(self.app)
        return row is not None and row[0] == self.holder and row[1] > now

    def release(self) -> None:
        self._fresh_until = float("-inf")
        self.journal.release(self.app, self.holder)
