"""Replicas divide apps: each claims at most ceil(apps / live replicas), a newcomer
gets its share from the others, a dead replica's apps go to the living once its
Leases expire, and a clean shutdown hands everything over at once."""

from __future__ import annotations

import math
import re

import pytest

from gitmedic.reconciler.leases.api import LeaseApiError
from gitmedic.reconciler.leases.elector import Timing
from gitmedic.reconciler.leases.shards import ROLE, ShardCoordinator, app_lease_name
from tests.leases.fake_leases import Clock, FakeLeases

APPS = [f"app-{i}" for i in range(10)]
TIMING = Timing.of(15)


def replicas(
    api: FakeLeases, clock: Clock, n: int, apps: list[str] = APPS
) -> list[ShardCoordinator]:
    return [
        ShardCoordinator(api, apps, f"r{i}", group="g", timing=TIMING, clock=clock)
        for i in range(n)
    ]


def rounds(coordinators: list[ShardCoordinator], clock: Clock, n: int = 8) -> None:
    """Enough rounds (24 s) for replicas that started together to find their slots."""
    for _ in range(n):
        for c in coordinators:
            c.tick()
        clock.advance(TIMING.retry_s)


def shares(coordinators: list[ShardCoordinator]) -> list[set[str]]:
    return [{a for a in APPS if c.holds(a)} for c in coordinators]


def assert_divided(coordinators: list[ShardCoordinator]) -> None:
    held = shares(coordinators)
    assert sorted(a for share in held for a in share) == sorted(APPS)  # each once
    cap = math.ceil(len(APPS) / len(coordinators))
    assert all(len(share) <= cap for share in held), held


def test_one_replica_takes_every_app() -> None:
    api, clock = FakeLeases(), Clock()
    (only,) = replicas(api, clock, 1)
    share = only.tick()
    assert share.live == 1 and share.cap == 10 and share.held == tuple(APPS)
    assert share.slot == "g-replica-0"


def test_three_replicas_divide_ten_apps_at_most_four_each() -> None:
    api, clock = FakeLeases(), Clock()
    three = replicas(api, clock, 3)
    rounds(three, clock)
    assert_divided(three)
    assert sorted(len(s) for s in shares(three)) == [3, 3, 4]
    slots = {c.slot for c in three}
    assert slots == {"g-replica-0", "g-replica-1", "g-replica-2"}
    assert all(api.leases[app_lease_name("g", a)].labels[ROLE] == "app" for a in APPS)


def test_a_replica_that_joins_gets_its_share_from_the_others() -> None:
    api, clock = FakeLeases(), Clock()
    two = replicas(api, clock, 2)
    rounds(two, clock)
    assert sorted(len(s) for s in shares(two)) == [5, 5]
    newcomer = ShardCoordinator(api, APPS, "r9", group="g", timing=TIMING, clock=clock)
    rounds([*two, newcomer], clock)
    assert_divided([*two, newcomer])
    assert len(shares([newcomer])[0]) == 3


def test_a_dead_replicas_apps_are_taken_within_the_lease_duration_and_a_round() -> None:
    api, clock = FakeLeases(), Clock()
    a, b, c = replicas(api, clock, 3)
    rounds([a, b, c], clock)
    orphans = shares([c])[0]
    died = clock.now  # c stops renewing: its last writes were at most this old
    waited = 0.0
    while not all(a.holds(x) or b.holds(x) for x in orphans):
        for survivor in (a, b):
            survivor.tick()
        clock.advance(TIMING.retry_s)
        waited = clock.now - died
        assert waited <= TIMING.duration_s + 2 * TIMING.retry_s, "not taken over in time"
    assert waited >= TIMING.duration_s - TIMING.renew_every_s  # never before it could expire
    assert_divided([a, b])
    assert {api.holder(app_lease_name("g", x)) for x in orphans} <= {"r0", "r1"}


def test_a_clean_shutdown_hands_every_app_over_at_once() -> None:
    api, clock = FakeLeases(), Clock()
    a, b = replicas(api, clock, 2)
    rounds([a, b], clock)
    b.release_all()
    assert not shares([b])[0]
    assert all(api.leases[app_lease_name("g", x)].holder != "r1" for x in APPS)
    assert api.leases[b.slot].holder == ""
    a.tick()  # no waiting: the released Leases are free, and b is no longer counted
    assert shares([a])[0] == set(APPS)


def test_a_restarted_replica_reuses_a_dead_ones_slot_and_makes_no_new_one() -> None:
    api, clock = FakeLeases(), Clock()
    a, dead = replicas(api, clock, 2)
    rounds([a, dead], clock)
    assert dead.slot == "g-replica-1"
    restarted = ShardCoordinator(api, APPS, "r-new", group="g", timing=TIMING, clock=clock)
    share = restarted.tick()  # both slots look held: it waits, holding nothing
    assert (share.slot, share.cap, share.held) == ("", 0, ())
    rounds([a, restarted], clock)
    assert restarted.slot == "g-replica-1"
    slots = {n for n, r in api.leases.items() if r.labels[ROLE] == "replica"}
    assert slots == {"g-replica-0", "g-replica-1"}
    assert_divided([a, restarted])


def test_replicas_that_start_together_make_a_slot_each_without_waiting() -> None:
    api, clock = FakeLeases(), Clock()
    three = replicas(api, clock, 3)
    for c in three:  # nobody has seen any slot: each makes the next one at once
        c.tick()
    assert [c.slot for c in three] == ["g-replica-0", "", ""]
    rounds(three, clock, 6)  # 18 s: the other two waited one duration, then joined
    assert [c.slot for c in three] == ["g-replica-0", "g-replica-1", "g-replica-2"]


def test_an_unreachable_api_server_raises_and_every_hold_lapses_by_the_deadline() -> None:
    api, clock = FakeLeases(), Clock()
    (only,) = replicas(api, clock, 1)
    only.tick()
    api.down = True
    with pytest.raises(LeaseApiError):
        only.tick()
    clock.advance(TIMING.renew_deadline_s)
    assert not any(only.holds(a) for a in APPS)
    assert not only.grant(APPS[0]).acquired


def test_grant_names_the_replica_holding_an_app() -> None:
    api, clock = FakeLeases(), Clock()
    a, b = replicas(api, clock, 2)
    rounds([a, b], clock)
    theirs = next(x for x in APPS if b.holds(x))
    grant = a.grant(theirs)
    assert not grant.acquired and grant.holder == "r1"
    assert not a.grant("not-an-app").acquired


def test_renewals_cost_a_write_per_app_per_third_of_the_duration() -> None:
    api, clock = FakeLeases(), Clock()
    (only,) = replicas(api, clock, 1)
    only.tick()
    before = api.writes
    for _ in range(10):  # 30 s in rounds of 3 s: due every 5 s, renewed at 6, 12, ..., 30
        clock.advance(TIMING.retry_s)
        only.tick()
    assert api.writes - before == 5 * 11  # 10 apps and the slot


def test_app_lease_names_are_dns_names_distinct_for_distinct_apps() -> None:
    names = {app_lease_name("g", a) for a in ("Shop", "shop", "shop/../x", "ünï", "a" * 300)}
    assert len(names) == 5
    assert all(re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", n) and len(n) <= 63 for n in names)


@pytest.mark.parametrize("group", ["", "Upper", "a_b", "x" * 40, "-a"])
def test_a_group_that_cannot_name_a_lease_is_refused(group: str) -> None:
    with pytest.raises(ValueError, match="shard group"):
        ShardCoordinator(FakeLeases(), APPS, "r", group=group, clock=Clock())


def test_a_busy_app_is_not_shed_until_its_step_or_transaction_is_done() -> None:
    api, clock = FakeLeases(), Clock()
    busy: set[str] = set(APPS)
    a = ShardCoordinator(
        api, APPS, "r0", group="g", timing=TIMING, clock=clock, busy=busy.__contains__
    )
    rounds([a], clock)
    b = ShardCoordinator(api, APPS, "r1", group="g", timing=TIMING, clock=clock)
    rounds([a, b], clock)
    assert shares([a, b]) == [set(APPS), set()], "nothing shed while every app is busy"
    busy.clear()
    rounds([a, b], clock, 2)
    assert sorted(len(s) for s in shares([a, b])) == [5, 5]


def test_a_replica_under_its_cap_keeps_every_app_it_holds() -> None:
    api, clock = FakeLeases(), Clock()
    a, b, c = replicas(api, clock, 3)
    rounds([a, b, c], clock)
    mine = shares([a])[0]
    transitions = {x: api.leases[app_lease_name("g", x)].transitions for x in mine}
    for _ in range(10):  # c is gone: a's cap rises from 4 to 5, and it sheds nothing
        for survivor in (a, b):
            survivor.tick()
        clock.advance(TIMING.retry_s)
    assert mine <= shares([a])[0]
    assert {x: api.leases[app_lease_name("g", x)].transitions for x in mine} == transitions
