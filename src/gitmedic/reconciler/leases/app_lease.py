"""An app's writer lease backed by its Kubernetes Lease (the seam of
:class:`~gitmedic.reconciler.transaction.lease.WriterLease`).

The Kubernetes Lease decides who writes; the journal's writer row still records
it, so ``gitmedic prs`` and a shared journal say who acts. The journal row is
*fenced* by the Kubernetes Lease: while this replica holds the app's Lease, any
other holder of the journal row is taken to be gone (its Lease was released or
expired, or it could not have lost it to us), so the row is taken at once instead
of after the journal's own expiry.

The Kubernetes Lease is named after the app's ``shard`` name, unique among every
repository one install serves (``serve --repos``: ``repo/app``); the journal's row
after the app as its own journal knows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.reconciler.leases.shards import ShardCoordinator
from gitmedic.reconciler.transaction.journal import Journal, LockGrant
from gitmedic.reconciler.transaction.lease import Lease


@dataclass
class ShardLease:
    shards: ShardCoordinator
    journal_lease: Lease
    shard: str = ""  # the app's name among the coordinator's; default the journal's

    @classmethod
    def of(
        cls,
        shards: ShardCoordinator,
        journal: Journal,
        app: str,
        ttl_s: float,
        shard: str = "",
    ) -> ShardLease:
        fenced = Lease(journal, app, shards.holder, ttl_s, dead=lambda holder: True)
        return cls(shards, fenced, shard or app)

    @property
    def holder(self) -> str:
        return self.shards.holder

    def hold(self) -> LockGrant:
        grant = self.shards.grant(self.shard or self.journal_lease.app)
        if not grant.acquired:
            return grant if grant.holder else LockGrant(False, "no replica yet (its Lease is free)")
        return self.journal_lease.hold()

    def release(self) -> None:
        """The journal's row; the Kubernetes Lease is released by the coordinator."""
        self.journal_lease.release()
