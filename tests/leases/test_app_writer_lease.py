"""An app's writer lease backed by its Kubernetes Lease: refused (naming the holder)
unless this replica holds the app's Lease; held, it fences the journal's row, taken
at once from whoever wrote it last."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.leases.app_lease import ShardLease
from gitmedic.reconciler.leases.elector import Timing
from gitmedic.reconciler.leases.shards import ShardCoordinator
from gitmedic.reconciler.transaction import Journal
from gitmedic.reconciler.transaction.lease import Lease, WriterLease
from tests.leases.fake_leases import Clock, FakeLeases


def coordinators(clock: Clock) -> tuple[ShardCoordinator, ShardCoordinator]:
    api = FakeLeases()
    a, b = (
        ShardCoordinator(api, ["shop", "blog"], h, group="g", timing=Timing.of(15), clock=clock)
        for h in ("host:1:a", "host:2:b")
    )
    for _ in range(8):
        a.tick()
        b.tick()
        clock.advance(3)
    return a, b


def test_only_the_replica_holding_the_apps_lease_writes_and_it_fences_the_journal(
    tmp_path: Path,
) -> None:
    clock = Clock()
    a, b = coordinators(clock)
    owner, other = (a, b) if a.holds("shop") else (b, a)
    journal = Journal(tmp_path / "journal.sqlite")
    stale = Lease(journal, "shop", "elsewhere:9:dead", ttl_s=3600, clock=clock)
    assert stale.hold().acquired  # a writer row that would not expire for an hour
    mine: WriterLease = ShardLease.of(owner, journal, "shop", 120)
    theirs: WriterLease = ShardLease.of(other, journal, "shop", 120)
    refused = theirs.hold()
    assert not refused.acquired and refused.holder == owner.holder
    grant = mine.hold()
    assert grant.acquired and grant.taken_over_from == "elsewhere:9:dead"
    assert not stale.hold().acquired  # the row is the owner's now


def test_an_app_whose_lease_nobody_holds_yet_is_refused_saying_so(tmp_path: Path) -> None:
    clock = Clock()
    lone = ShardCoordinator(FakeLeases(), ["shop"], "h", group="g", clock=clock)
    grant = ShardLease.of(lone, Journal(tmp_path / "j.sqlite"), "shop", 120).hold()
    assert not grant.acquired and grant.holder == "no replica yet (its Lease is free)"


def test_an_apps_lease_may_be_named_apart_from_its_journal_row(tmp_path: Path) -> None:
    """serve --repos: the Kubernetes Lease of ``repo/app`` (unique among every repository's
    apps), the journal row of ``app`` (its repository's own journal)."""
    clock = Clock()
    api = FakeLeases()
    apps = ["acme/shop/web", "acme/blog/web"]
    lone = ShardCoordinator(api, apps, "h:1:a", group="g", timing=Timing.of(15), clock=clock)
    for _ in range(4):
        lone.tick()
        clock.advance(3)
    journal = Journal(tmp_path / "journal.sqlite")
    lease = ShardLease.of(lone, journal, "web", 120, shard="acme/blog/web")
    assert lease.hold().acquired
    assert (journal.lock_of("web") or ("",))[0] == "h:1:a"
    unknown = ShardLease.of(lone, journal, "web", 120).hold()  # "web" is no shard's name
    assert not unknown.acquired
