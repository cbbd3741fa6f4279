"""``gitmedic serve --shard-leases NAMESPACE``: replicas divide the apps with Leases.

Off by default (one replica serves every app). On, each replica runs a
:class:`~gitmedic.reconciler.leases.shards.ShardCoordinator` in a thread of its
own, a round every ``retry_s`` as client-go's leader election renews in its own
goroutine: a monitor step that waits through a verification window must not let
its Leases expire. The monitor steps only the apps whose Lease this replica
holds, and each of those loops' writer lease is the Kubernetes Lease
(:class:`~gitmedic.reconciler.leases.app_lease.ShardLease`). An app mid-step or
with an unsettled transaction is not handed to a newcomer until it is settled.

Settings: ``--shard-leases`` or ``GITMEDIC_SHARD_LEASES`` (the namespace, the
bot's own; the chart sets it with ``shards.enabled``), ``--shard-lease-seconds``
or ``GITMEDIC_SHARD_LEASE_SECONDS`` (leaseDurationSeconds, default 15) and
``GITMEDIC_SHARD_GROUP`` (the Lease names' prefix: the replicas of one install).
The first round runs before serve starts: a Lease API that cannot be reached or
refuses the bot is an error at start, never a replica that silently serves nothing.
"""

from __future__ import annotations

import argparse
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gitmedic.reconciler.leases.api import LeaseApi, LeaseApiError
from gitmedic.reconciler.leases.elector import Timing
from gitmedic.reconciler.leases.shards import ShardCoordinator, Share

log = logging.getLogger(__name__)
DEFAULT_LEASE_S = 15


@dataclass(frozen=True)
class ShardSettings:
    namespace: str
    lease_s: int = DEFAULT_LEASE_S
    group: str = "gitmedic"


def shard_settings(args: argparse.Namespace, env: Mapping[str, str]) -> ShardSettings | None:
    """The settings, or None when sharding is off; bad values raise ValueError."""
    namespace = getattr(args, "shard_leases", None) or env.get("GITMEDIC_SHARD_LEASES", "")
    if not namespace:
        return None
    if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", namespace):
        raise ValueError(f"--shard-leases {namespace!r}: not a namespace name")
    seconds = getattr(args, "shard_lease_seconds", None)
    raw = str(seconds) if seconds is not None else env.get("GITMEDIC_SHARD_LEASE_SECONDS", "")
    try:
        lease_s = int(raw or DEFAULT_LEASE_S)
    except ValueError:
        raise ValueError(f"GITMEDIC_SHARD_LEASE_SECONDS={raw!r}: not a whole number") from None
    Timing.of(lease_s)  # refuses one too short
    return ShardSettings(namespace, lease_s, env.get("GITMEDIC_SHARD_GROUP", "gitmedic"))


class Shards:
    """The coordinator and the thread that runs its rounds."""

    def __init__(self, coordinator: ShardCoordinator, namespace: str) -> None:
        self.coordinator, self.namespace = coordinator, namespace
        self.share: Share | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gitmedic-shards", daemon=True)

    @classmethod
    def of(
        cls,
        settings: ShardSettings,
        apps: Sequence[str],
        holder: str,
        busy: Callable[[str], bool],
        api: LeaseApi | None = None,
    ) -> Shards:
        """The coordinator of ``apps``, its first round done (errors raise ValueError)."""
        if api is None:
            from gitmedic.reconciler.leases.kube import KubeLeases
            from gitmedic.reconciler.live import LiveReadError, connect

            try:
                api = KubeLeases(connect(), settings.namespace)
            except LiveReadError as err:
                raise ValueError(f"shard leases: {err}") from None
        coordinator = ShardCoordinator(
            api,
            apps,
            holder,
            group=settings.group,
            timing=Timing.of(settings.lease_s),
            clock=time.monotonic,
            busy=busy,
        )
        shards = cls(coordinator, settings.namespace)
        try:
            shards.round()
        except LeaseApiError as err:
            raise ValueError(f"shard leases in namespace {settings.namespace}: {err}") from None
        return shards

    def holds(self, app: str) -> bool:
        return self.coordinator.holds(app)

    def describe(self) -> str:
        c = self.coordinator
        return (
            f"shards: Leases in namespace {self.namespace} (group {c.group}, holder {c.holder}, "
            f"lease {c.timing.duration_s} s)"
        )

    def round(self) -> Share:
        share = self.coordinator.tick()
        if share.taken or share.released or self.share is None or share.live != self.share.live:
            log.info(
                "shards: %s of %d replicas, %d of %d apps (cap %d); took %s; released %s",
                share.slot or "no slot yet",
                share.live,
                len(share.held),
                len(self.coordinator.apps),
                share.cap,
                ", ".join(share.taken) or "none",
                ", ".join(share.released) or "none",
            )
        self.share = share
        return share

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop the rounds and release every Lease: the others take over at once."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.coordinator.release_all()

    def _run(self) -> None:
        while not self._stop.wait(self.coordinator.timing.retry_s):
            try:
                self.round()
            except LeaseApiError as err:  # the holds lapse by their deadline: fail closed
                log.warning("shards: a round failed: %s", err)
            except Exception:  # a bug: said, and the next round tries again
                log.exception("shards: a round failed")
