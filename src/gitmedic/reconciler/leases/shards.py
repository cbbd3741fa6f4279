"""Replicas divide apps: one heartbeat Lease per replica, one Lease per app.

Each round (:meth:`ShardCoordinator.tick`, every ``retry_s``) a replica lists the
group's Leases once, then:

1. renews its heartbeat, a *replica slot* Lease ``<group>-replica-<i>``: the first
   slot that is free (released, or expired) is taken, and a new slot is made only
   after a replica has watched the existing ones stay held for a whole duration,
   so a restarted pod reuses a dead one's slot and the namespace holds as many
   slot Leases as replicas ever ran at once (the Role grants no ``delete``). A
   replica without a slot is not counted and claims nothing: a new one joins a
   group that is already running one duration after it starts;
2. counts the live replicas: slots held and not expired, itself included (as
   kopf's peering counts peers by their last-seen time and lifetime);
3. renews the app Leases it holds that are due, and caps its share at
   ``apps // live`` (one more for the first ``apps % live`` slots, so no share
   exceeds ``ceil(apps / live)`` and they differ by one at most): over the cap
   (a replica joined) it releases the apps it
   prefers least, which the newcomer then takes at once; under it, it takes free
   app Leases (never made, released, or expired: a dead replica's) in its own
   order of preference until it reaches the cap.

The order of preference is rendezvous hashing of (slot, app): replicas prefer
different apps, so they seldom race for one Lease, and a slot's share changes
little when replicas come and go. When two do race, the version check lets one
write land (:mod:`.elector`). An app Lease's name is a slug of the app plus a hash
(Lease names are DNS subdomains; app names are the repository's text), and the
app's own name is in its ``gitmedic.dev/app`` annotation.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitmedic.reconciler.leases.api import LeaseApi, LeaseApiError
from gitmedic.reconciler.leases.elector import Elector, Timing
from gitmedic.reconciler.leases.record import LeaseRecord
from gitmedic.reconciler.transaction.journal import LockGrant

log = logging.getLogger(__name__)

ROLE = "gitmedic.dev/lease"  # label: replica | app
GROUP = "gitmedic.dev/shard-group"  # label: the replicas that divide one set of apps
APP = "gitmedic.dev/app"  # annotation: the app's name as the repository writes it
MAX_SLOTS = 128


class NoSlot(LeaseApiError):
    """Every replica slot is held by a live replica."""


@dataclass(frozen=True)
class Share:
    """What one round left this replica with."""

    slot: str
    live: int  # replicas alive, itself included
    cap: int
    held: tuple[str, ...]  # apps, in the configured order
    taken: tuple[str, ...] = ()  # this round
    released: tuple[str, ...] = ()


def app_lease_name(group: str, app: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", app.lower()).strip("-")[:40].strip("-") or "app"
    digest = hashlib.sha256(app.encode()).hexdigest()[:10]
    return f"{group}-app-{slug}-{digest}"


def _preference(slot: str, app: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{slot}\0{app}".encode()).digest()[:8], "big")


class ShardCoordinator:
    def __init__(
        self,
        api: LeaseApi,
        apps: Sequence[str],
        holder: str,
        *,
        group: str = "gitmedic",
        timing: Timing | None = None,
        clock: Callable[[], float],
        wall: Callable[[], float] = time.time,
        busy: Callable[[str], bool] = lambda app: False,
    ) -> None:
        if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?", group):
            raise ValueError(f"shard group {group!r}: lowercase letters, digits and '-', <= 32")
        self.api, self.group, self.holder = api, group, holder
        self.apps = tuple(dict.fromkeys(apps))
        self.names = {app: app_lease_name(group, app) for app in self.apps}
        self.elector = Elector(api, holder, timing or Timing(), clock, wall)
        self.busy = busy  # an app mid-step or mid-transaction is not shed (later, if still over)
        self.slot = ""
        self.started: float | None = None  # the first round's time
        self._lock = threading.Lock()  # the coordinator's thread writes, the monitor reads

    @property
    def timing(self) -> Timing:
        return self.elector.timing

    def tick(self) -> Share:
        """One round: list once, heartbeat, count, renew, shed or claim. API errors
        raise after what was written (the holder's grip decays by its deadline)."""
        with self._lock:
            self.elector.observe(self.api.list(f"{GROUP}={self.group}"))
            slotted = self._heartbeat()
            live = self._live()
            cap = self._quota(live) if slotted else 0
            self._renew()
            released = self._shed(cap)
            taken = self._claim(cap)
            return Share(self.slot, len(live), cap, self._held(), taken, released)

    def holds(self, app: str) -> bool:
        with self._lock:
            return app in self.names and self.elector.holds(self.names[app])

    def grant(self, app: str) -> LockGrant:
        """The app's Lease as this replica sees it: held, or who holds it (no write)."""
        with self._lock:
            if app not in self.names:
                return LockGrant(False, f"no Lease: {app} is not among this replica's apps")
            return self.elector.state(self.names[app])

    def release_all(self) -> None:
        """A clean shutdown: every app Lease and the slot, free for the others at once."""
        with self._lock:
            for name in [*self.names.values(), self.slot]:
                if name:
                    try:
                        self.elector.release(name)
                    except LeaseApiError as err:  # it expires on its own
                        log.warning("could not release Lease %s: %s", name, err)

    def _heartbeat(self) -> bool:
        """Hold a replica slot: renew ours, else take a free one. A new slot is made only
        once every existing one has been seen held for a whole duration since this
        replica started (a dead replica's slot expires by then and is reused), so slots
        never outnumber the replicas that ran at once; until then this one claims nothing."""
        if self.slot and self.elector.holds(self.slot) and not self.elector.due(self.slot):
            return True
        if self.slot and self.elector.acquire(self.slot, self._fresh("replica")).acquired:
            return True
        self.slot = ""
        now = self.elector.clock()
        self.started = now if self.started is None else self.started
        patient = any(self._is_slot(name) for name in self.elector.seen)
        for i in range(MAX_SLOTS):
            name = f"{self.group}-replica-{i}"
            if self._others(name):
                continue  # a live replica's (or one not seen expire yet)
            waited = now >= self.started + self.timing.duration_s
            if name not in self.elector.seen and patient and not waited:
                return False
            if self.elector.acquire(name, self._fresh("replica")).acquired:
                self.slot = name
                return True
        raise NoSlot(f"all {MAX_SLOTS} replica slots of group {self.group} are held")

    def _is_slot(self, name: str) -> bool:
        """A slot of this group by its name and its label (another object is no replica)."""
        named = re.fullmatch(rf"{self.group}-replica-\d{{1,3}}", name)
        return bool(named) and self.elector.seen[name].record.labels.get(ROLE) == "replica"

    def _live(self) -> list[str]:
        """The slots held and not expired, in slot order (this replica's among them)."""
        now = self.elector.clock()
        live = [
            name
            for name, seen in self.elector.seen.items()
            if self._is_slot(name) and (name == self.slot or not seen.free(now))
        ]
        return sorted(live, key=lambda name: int(name.rsplit("-", 1)[1]))

    def _quota(self, live: list[str]) -> int:
        """``apps // live``, one more for the first ``apps % live`` slots: the shares
        differ by one at most and add up to every app (all at most ceil(apps / live))."""
        whole, rest = divmod(len(self.apps), len(live))
        return whole + (1 if live.index(self.slot) < rest else 0)

    def _renew(self) -> None:
        for name in self.names.values():
            if self.elector.due(name):
                self.elector.acquire(name, self._fresh("app"))

    def _shed(self, cap: int) -> tuple[str, ...]:
        held = self._held()
        idle = [app for app in held if not self.busy(app)]
        over = max(0, len(held) - cap)
        surplus = sorted(idle, key=lambda app: _preference(self.slot, app))[:over]
        for app in surplus:
            self.elector.release(self.names[app])
        return tuple(a for a in self.apps if a in surplus)

    def _claim(self, cap: int) -> tuple[str, ...]:
        taken: list[str] = []
        held = len(self._held())
        for app in sorted(self.apps, key=lambda a: -_preference(self.slot, a)):
            if held >= cap:
                break
            name = self.names[app]
            if self.elector.holds(name) or self._others(name):
                continue
            if self.elector.acquire(name, self._fresh("app", app)).acquired:
                taken.append(app)
                held += 1
        return tuple(a for a in self.apps if a in taken)

    def _others(self, name: str) -> bool:
        """Held by another replica, as far as this one has seen (its own lapsed hold is not)."""
        return self.elector.state(name).holder not in ("", self.holder)

    def _held(self) -> tuple[str, ...]:
        return tuple(app for app in self.apps if self.elector.holds(self.names[app]))

    def _fresh(self, role: str, app: str = "") -> LeaseRecord:
        labels = {ROLE: role, GROUP: self.group, "app.kubernetes.io/managed-by": "gitmedic"}
        annotations = {APP: app} if app else {}
        now = self.elector.wall()
        return LeaseRecord(
            self.holder, self.timing.duration_s, now, now, 0, "", labels, annotations
        )
