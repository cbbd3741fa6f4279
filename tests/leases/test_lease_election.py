"""One Lease between processes, with client-go's semantics: acquire, renew before
expiry, expiry judged on the observer's own clock, takeover, release, and the
409 that makes exactly one of two racing writers win."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.leases.api import LeaseApiError
from gitmedic.reconciler.leases.elector import Elector, Timing
from gitmedic.reconciler.leases.record import LeaseRecord
from tests.leases.fake_leases import Clock, FakeLeases

TIMING = Timing.of(15)  # renew every 5 s, give up after 10, others wait 15
NAME = "gitmedic-app-shop"
FRESH = LeaseRecord("", 0, 0.0, 0.0, labels={"gitmedic.dev/shard-group": "g"})


def elector(api: FakeLeases, holder: str, clock: Clock) -> Elector:
    return Elector(api, holder, TIMING, clock, wall=clock)  # one clock judges and stamps


def seen_by(one: Elector, api: FakeLeases) -> Elector:
    one.observe(api.list(""))
    return one


def test_a_lease_nobody_has_is_created_with_the_holder_and_its_times() -> None:
    api, clock = FakeLeases(), Clock()
    grant = elector(api, "a", clock).acquire(NAME, FRESH)
    assert grant.acquired and grant.holder == "a" and not grant.taken_over_from
    record = api.leases[NAME]
    assert (record.holder, record.duration_s, record.transitions) == ("a", 15, 0)
    assert record.acquired == record.renewed == clock.now


def test_a_renewal_moves_renew_time_only() -> None:
    api, clock = FakeLeases(), Clock()
    a = elector(api, "a", clock)
    a.acquire(NAME, FRESH)
    acquired = api.leases[NAME].acquired
    clock.advance(5)
    assert a.due(NAME)
    assert a.acquire(NAME, FRESH).acquired
    record = api.leases[NAME]
    assert (record.acquired, record.renewed, record.transitions) == (acquired, clock.now, 0)


def test_another_holder_is_refused_until_the_duration_passes_since_it_saw_a_change() -> None:
    api, clock = FakeLeases(), Clock()
    elector(api, "a", clock).acquire(NAME, FRESH)
    b = seen_by(elector(api, "b", clock), api)
    clock.advance(14.9)
    b.observe(api.list(""))  # no new version: still the one seen 14.9 s ago
    refused = b.acquire(NAME, FRESH)
    assert not refused.acquired and refused.holder == "a"
    assert refused.expires == clock.now + 0.1
    clock.advance(0.1)
    taken = b.acquire(NAME, FRESH)
    assert taken.acquired and taken.taken_over_from == "a"
    record = api.leases[NAME]
    assert (record.holder, record.acquired, record.transitions) == ("b", clock.now, 1)


def test_expiry_is_judged_on_the_observers_clock_not_the_written_renew_time() -> None:
    api, clock = FakeLeases(), Clock()
    a_wall = Clock(clock.now - 3600)  # the holder's wall clock is an hour behind
    Elector(api, "a", TIMING, clock, wall=a_wall).acquire(NAME, FRESH)
    assert api.leases[NAME].renewed == clock.now - 3600
    b = seen_by(elector(api, "b", clock), api)
    assert not b.acquire(NAME, FRESH).acquired  # a renewTime an hour old is not expiry


def test_a_renewing_holder_is_never_taken_over() -> None:
    api, clock = FakeLeases(), Clock()
    a, b = elector(api, "a", clock), elector(api, "b", clock)
    a.acquire(NAME, FRESH)
    for _ in range(10):
        b.observe(api.list(""))
        assert not b.acquire(NAME, FRESH).acquired
        clock.advance(5)
        assert a.acquire(NAME, FRESH).acquired
    assert api.leases[NAME].transitions == 0


def test_two_racing_for_an_expired_lease_exactly_one_wins_the_other_gets_409() -> None:
    api, clock = FakeLeases(), Clock()
    elector(api, "a", clock).acquire(NAME, FRESH)
    b, c = seen_by(elector(api, "b", clock), api), seen_by(elector(api, "c", clock), api)
    clock.advance(15)
    won, lost = b.acquire(NAME, FRESH), c.acquire(NAME, FRESH)  # both read the same version
    assert won.acquired and not lost.acquired
    assert api.holder(NAME) == "b" and api.leases[NAME].transitions == 1
    assert b.holds(NAME) and not c.holds(NAME)


def test_two_racing_to_create_one_lease_exactly_one_wins() -> None:
    api, clock = FakeLeases(), Clock()
    b, c = elector(api, "b", clock), elector(api, "c", clock)
    assert b.acquire(NAME, FRESH).acquired
    assert not c.acquire(NAME, FRESH).acquired  # it had not seen b's: create is 409
    assert api.holder(NAME) == "b"


def test_a_release_lets_another_take_it_at_once() -> None:
    api, clock = FakeLeases(), Clock()
    a = elector(api, "a", clock)
    a.acquire(NAME, FRESH)
    b = seen_by(elector(api, "b", clock), api)
    a.release(NAME)
    record = api.leases[NAME]
    assert (record.holder, record.duration_s) == ("", 1) and not a.holds(NAME)
    b.observe(api.list(""))
    taken = b.acquire(NAME, FRESH)  # no time passed
    assert taken.acquired and api.leases[NAME].transitions == 1


def test_a_holder_that_cannot_renew_stops_holding_before_others_may_take_it() -> None:
    api, clock = FakeLeases(), Clock()
    a = elector(api, "a", clock)
    a.acquire(NAME, FRESH)
    b = seen_by(elector(api, "b", clock), api)
    api.down = True
    clock.advance(5)
    with pytest.raises(LeaseApiError):
        a.acquire(NAME, FRESH)
    clock.advance(4.9)
    assert a.holds(NAME)
    clock.advance(0.1)  # the renew deadline, 10 s after the last renewal landed
    assert not a.holds(NAME)
    api.down = False
    clock.advance(4.9)  # 14.9 s: b still waits, though a already stopped
    b.observe(api.list(""))
    assert not b.acquire(NAME, FRESH).acquired
    clock.advance(0.1)
    assert b.acquire(NAME, FRESH).acquired


def test_a_holder_whose_renewal_conflicts_holds_nothing() -> None:
    api, clock = FakeLeases(), Clock()
    a = elector(api, "a", clock)
    a.acquire(NAME, FRESH)
    api.leases[NAME] = LeaseRecord("x", 15, 0, 0, 0, "999")  # written behind its back
    clock.advance(5)
    assert not a.acquire(NAME, FRESH).acquired and not a.holds(NAME)


def test_a_lease_another_writes_is_lost_at_the_next_list() -> None:
    api, clock = FakeLeases(), Clock()
    a = elector(api, "a", clock)
    a.acquire(NAME, FRESH)
    api.update(NAME, api.leases[NAME].taken_by("x", clock.now, 15))
    a.observe(api.list(""))
    assert not a.holds(NAME) and a.state(NAME).holder == "x"


@pytest.mark.parametrize(
    ("duration", "retry", "every", "deadline"), [(3, 3, 1, 2), (15, 0, 5, 10), (15, 3, 5, 15)]
)
def test_timing_that_could_let_two_holders_act_is_refused(
    duration: int, retry: float, every: float, deadline: float
) -> None:
    with pytest.raises(ValueError, match="lease timing"):
        Timing(duration, deadline, retry, every)


def test_a_duration_under_three_seconds_is_refused() -> None:
    with pytest.raises(ValueError, match="too short"):
        Timing.of(2)
