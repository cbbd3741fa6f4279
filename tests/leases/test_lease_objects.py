"""A Lease's spec both ways (MicroTime with microseconds, as the API server wants it),
and a Lease object that is not what a Lease looks like refused, never half-read."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.reconciler.leases.record import (
    LeaseFormatError,
    LeaseRecord,
    from_object,
    micro_time,
    to_object,
)

RECORD = LeaseRecord(
    "host:42:cafe", 15, 1_700_000_000.25, 1_700_000_007.5, 3, "", {"a": "b"}, {"c": "d"}
)


def test_a_record_round_trips_through_the_lease_object() -> None:
    obj = to_object("gm-app-x", "bots", RECORD)
    assert obj["apiVersion"] == "coordination.k8s.io/v1" and obj["kind"] == "Lease"
    assert obj["spec"]["renewTime"] == "2023-11-14T22:13:27.500000Z"
    assert "resourceVersion" not in obj["metadata"]  # a create carries none
    obj["metadata"]["resourceVersion"] = "17"
    name, back = from_object(obj)
    assert name == "gm-app-x" and back == LeaseRecord(**{**RECORD.__dict__, "version": "17"})


def test_micro_time_keeps_microseconds_in_utc() -> None:
    assert micro_time(0.000001) == "1970-01-01T00:00:00.000001Z"


def test_a_released_lease_has_no_holder_and_keeps_its_transitions() -> None:
    released = RECORD.released_at(2e9)
    assert (released.holder, released.duration_s, released.transitions) == ("", 1, 3)
    taken = released.taken_by("other", 2e9 + 1, 15)
    assert (taken.holder, taken.acquired, taken.transitions) == ("other", 2e9 + 1, 4)


def test_a_lease_without_times_reads_as_never_renewed() -> None:
    _, record = from_object({"metadata": {"name": "x"}, "spec": {"holderIdentity": "h"}})
    assert (record.holder, record.renewed, record.duration_s) == ("h", 0.0, 0)


def _lease(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "x"}, "spec": spec}


@pytest.mark.parametrize(
    ("obj", "why"),
    [
        ([], "not an object"),
        ({"spec": {}}, "without metadata"),
        ({"metadata": {"name": ""}}, "without a name"),
        (_lease(leaseDurationSeconds="15"), "not a count"),
        (_lease(leaseDurationSeconds=True), "not a count"),
        (_lease(leaseTransitions=-1), "not a count"),
        (_lease(holderIdentity=7), "holderIdentity"),
        (_lease(renewTime="yesterday"), "not an RFC 3339 time"),
        (_lease(acquireTime="2026-01-01T00:00:00"), "without a zone"),
        (_lease(renewTime=12), "not a time"),
    ],
)
def test_a_malformed_lease_is_refused_naming_what_is_wrong(obj: object, why: str) -> None:
    with pytest.raises(LeaseFormatError, match=why):
        from_object(obj)
