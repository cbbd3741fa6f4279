"""Leases taken, renewed, taken over and released as client-go's leaderelection does.

A Lease is judged on this process's own (monotonic) clock, never on the times
written in it:
each version (``resourceVersion``) of a Lease is stamped with when this process
first saw it, and another holder's Lease has expired once ``leaseDurationSeconds``
have passed since then with no new version. Clock skew between replicas thus
does not matter (only their clocks' rates do), at the price that a process that
has just started waits a whole duration before it takes a dead holder's Lease.

Writes: a Lease nobody has is created; one this process holds is renewed (same
``acquireTime`` and transitions, new ``renewTime``); an expired or released one is
taken over (``acquireTime`` now, one more transition). Every update carries the
version read, so of two processes racing for one Lease the API server lets
exactly one write land; the other's 409 means it holds nothing. A holder counts
itself the holder only until ``renew_deadline_s`` after its last renewal landed,
shorter than the duration others wait: if the API server is unreachable, it stops
acting before anyone else may start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from gitmedic.reconciler.leases.api import LeaseApi, LeaseConflict
from gitmedic.reconciler.leases.record import LeaseRecord
from gitmedic.reconciler.transaction.journal import LockGrant


@dataclass(frozen=True)
class Timing:
    """client-go's three durations, from the one a person sets: the Lease's."""

    duration_s: int = 15
    renew_deadline_s: float = 10.0  # a holder stops acting this long after its last renewal
    retry_s: float = 3.0  # between two rounds of the coordinator
    renew_every_s: float = 5.0  # a held Lease is renewed once this old

    def __post_init__(self) -> None:
        if not 0 < self.retry_s <= self.renew_every_s < self.renew_deadline_s < self.duration_s:
            raise ValueError(
                "lease timing must be 0 < retry <= renew interval < renew deadline < duration"
            )

    @classmethod
    def of(cls, duration_s: int) -> Timing:
        """Renewed every third of the duration, given up after two thirds (two tries)."""
        if duration_s < 3:
            raise ValueError(f"a lease duration of {duration_s} s is too short (at least 3)")
        return cls(duration_s, duration_s * 2 / 3, duration_s / 5, duration_s / 3)


@dataclass(frozen=True)
class Seen:
    """A version of a Lease, and when this process first saw it (its own clock)."""

    record: LeaseRecord
    at: float

    @property
    def expires(self) -> float:
        return self.at + self.record.duration_s

    def free(self, now: float) -> bool:
        """Released (no holder) or expired: anyone may take it."""
        return not self.record.holder or now >= self.expires


@dataclass
class Elector:
    api: LeaseApi
    holder: str
    timing: Timing
    clock: Callable[[], float]  # judges: monotonic in a process (time.monotonic)
    wall: Callable[[], float] = time.time  # the times written into Leases, for people
    seen: dict[str, Seen] = field(default_factory=dict)
    renewed: dict[str, float] = field(default_factory=dict)  # held name -> last renewal landed

    def observe(self, listed: Mapping[str, LeaseRecord]) -> None:
        """What a list returned: new versions stamped now; Leases gone or taken, forgotten."""
        now = self.clock()
        for name, record in listed.items():
            old = self.seen.get(name)
            if old is None or old.record.version != record.version:
                self.seen[name] = Seen(record, now)
        for name in set(self.seen) - set(listed):
            del self.seen[name]
        for name in list(self.renewed):
            if name not in self.seen or self.seen[name].record.holder != self.holder:
                del self.renewed[name]  # deleted, or another holder wrote it: lost

    def holds(self, name: str) -> bool:
        renewed = self.renewed.get(name)
        return renewed is not None and self.clock() < renewed + self.timing.renew_deadline_s

    def due(self, name: str) -> bool:
        """Held, and old enough to renew (a renewal per round would cost a write per app)."""
        renewed = self.renewed.get(name)
        return renewed is not None and self.clock() >= renewed + self.timing.renew_every_s

    def state(self, name: str) -> LockGrant:
        """Who holds ``name`` as this process sees it, without writing."""
        if self.holds(name):
            return LockGrant(True, self.holder)
        seen = self.seen.get(name)
        if seen is None or seen.free(self.clock()):
            return LockGrant(False, "")
        return LockGrant(False, seen.record.holder, expires=seen.expires)

    def acquire(self, name: str, fresh: LeaseRecord) -> LockGrant:
        """Take or renew ``name`` (``fresh`` is the Lease to create if nobody has one):
        a refused grant names the holder; 409 is a refusal too. Other API errors raise."""
        now, stamp = self.clock(), self.wall()
        seen = self.seen.get(name)
        duration = self.timing.duration_s
        if seen is None:
            record = replace(fresh, holder=self.holder, duration_s=duration, acquired=stamp)
            write = self.api.create
        elif seen.record.holder == self.holder:
            record = replace(seen.record.renewed_at(stamp), duration_s=duration)
            write = self.api.update
        elif not seen.free(now):
            return LockGrant(False, seen.record.holder, expires=seen.expires)
        else:
            record = seen.record.taken_by(self.holder, stamp, duration)
            write = self.api.update
        try:
            written = write(name, replace(record, renewed=stamp))
        except LeaseConflict:
            self.renewed.pop(name, None)  # our version is stale: the next list says who won
            return LockGrant(False, seen.record.holder if seen else "")
        self.seen[name] = Seen(written, now)
        self.renewed[name] = now
        previous = seen.record.holder if seen and seen.record.holder != self.holder else ""
        return LockGrant(True, self.holder, previous)

    def release(self, name: str) -> None:
        """Give ``name`` up at once (a clean shutdown, or a share too large): others
        may take it without waiting for it to expire. A conflict means it was lost anyway."""
        seen = self.seen.get(name)
        self.renewed.pop(name, None)
        if seen is None or seen.record.holder != self.holder:
            return
        now = self.clock()
        try:
            released = seen.record.released_at(self.wall())
            self.seen[name] = Seen(self.api.update(name, released), now)
        except LeaseConflict:
            return
