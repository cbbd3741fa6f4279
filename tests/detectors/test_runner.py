"""The runner isolates detectors, and persistence debounces findings for the monitor."""

from __future__ import annotations

import inspect
import signal
from collections.abc import Iterator

import pytest

from gitmedic.detectors import (
    Detector,
    DetectorSpec,
    Finding,
    Mode,
    Obj,
    Persistence,
    Registry,
    Resource,
    Scope,
    Severity,
    Snapshot,
    run_detectors,
)
from gitmedic.detectors.registry import DuplicateDetectorError, UnknownDetectorError
from gitmedic.detectors.runner import thresholds_of

SVC = Resource("Service", "default", "web")


def spec(
    detector_id: str, scope: Scope = Scope.BOTH, fire: int = 2, clear: int = 2
) -> DetectorSpec:
    return DetectorSpec(
        id=detector_id,
        description="test",
        kinds=frozenset({"Service"}),
        severity=Severity.WARNING,
        remediation="none",
        scope=scope,
        fire_after=fire,
        clear_after=clear,
    )


def finding_of(s: DetectorSpec, name: str = "web") -> Finding:
    return s.finding(Resource("Service", "default", name), "seen")


def constant(detector_id: str, *names: str, scope: Scope = Scope.BOTH) -> Detector:
    s = spec(detector_id, scope)
    return Detector(s, lambda snap: [finding_of(s, n) for n in names])


def raising(snapshot: Snapshot) -> Iterator[Finding]:
    raise KeyError("spec")


def armed_timer(snapshot: Snapshot) -> Iterator[Finding]:
    """Fails when the runner armed an interval timer around it (a wall-clock budget)."""
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "a wall-clock budget is armed"
    yield finding_of(spec("timed"))


EMPTY = Snapshot([Obj(SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}})])


def test_a_detector_that_raises_is_reported_and_the_others_still_run() -> None:
    result = run_detectors([Detector(spec("broken"), raising), constant("fine", "web")], EMPTY)
    assert [f.detector for f in result.findings] == ["fine"]
    assert [(e.detector, e.message) for e in result.errors] == [("broken", "KeyError: 'spec'")]


def test_no_wall_clock_budget_decides_a_verdict() -> None:
    """A loaded machine must not turn a detector's findings into an error: no timer runs."""
    assert "budget_s" not in inspect.signature(run_detectors).parameters
    result = run_detectors([Detector(spec("timed"), armed_timer)], EMPTY)
    assert not result.errors
    assert [f.detector for f in result.findings] == ["timed"]


def test_a_failed_detector_is_named_as_unknown_not_empty() -> None:
    result = run_detectors([Detector(spec("broken"), raising), constant("fine", "web")], EMPTY)
    assert result.failed == frozenset({"broken"})
    assert result.problems() == ["detector broken failed: KeyError: 'spec'"]


def test_a_detector_returning_anothers_findings_is_an_error() -> None:
    other = spec("other")
    liar = Detector(spec("liar"), lambda snap: [finding_of(other)])
    result = run_detectors([liar], EMPTY)
    assert not result.findings
    assert result.errors[0].message == "returned something that is not its own Finding"


def test_scope_decides_which_state_a_detector_judges() -> None:
    detectors = [
        constant("live-only", "a", scope=Scope.LIVE),
        constant("desired", "b", scope=Scope.DESIRED),
    ]
    assert [f.detector for f in run_detectors(detectors, EMPTY).findings] == ["desired"]
    live = Snapshot(list(EMPTY), mode=Mode.LIVE)
    assert [f.detector for f in run_detectors(detectors, live).findings] == ["live-only"]


def test_findings_come_sorted_and_unique() -> None:
    result = run_detectors([constant("b", "z", "a", "a"), constant("a", "m")], EMPTY)
    assert [(f.detector, f.resource.name) for f in result.findings] == [
        ("a", "m"),
        ("b", "a"),
        ("b", "z"),
    ]


def test_registry_refuses_duplicates_and_lists_sorted() -> None:
    registry = Registry([constant("b"), constant("a")])
    assert [d.id for d in registry] == ["a", "b"]
    with pytest.raises(DuplicateDetectorError, match="'a' is registered twice"):
        registry.register(constant("a"))
    with pytest.raises(UnknownDetectorError, match="unknown detector 'zzz'"):
        registry.select(["zzz"])


def test_spec_ids_are_kebab_case() -> None:
    with pytest.raises(ValueError, match="kebab-case"):
        spec("Not_Kebab")


def test_fingerprint_is_stable_and_ignores_prose() -> None:
    s = spec("x")
    a = s.finding(SVC, "one summary", params={"port": 1})
    b = s.finding(SVC, "another summary", evidence="more", params={"port": 1})
    c = s.finding(SVC, "one summary", params={"port": 2})
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert Finding.from_json(a.to_json()).fingerprint == a.fingerprint


def test_unmasked_values_never_serialise() -> None:
    s = spec("x")
    f = s.finding(SVC, "password is ****", params={"value": "****"}, unmasked={"value": "hunter2"})
    assert "hunter2" not in repr(f)
    assert "hunter2" not in str(f.to_json())


def test_secret_values_are_masked_in_the_snapshot() -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "t0k"}}  # fmt: skip
    snap = Snapshot([Obj(Resource("Secret", "default", "db"), body)])
    secret = snap.get("Secret", "default", "db")
    assert secret is not None
    assert secret.body["data"] == {"password": "****"}
    assert secret.body["stringData"] == {"token": "****"}


class TestPersistence:
    s = spec("flappy", fire=2, clear=2)
    thresholds = thresholds_of([Detector(s, lambda snap: [])])

    def observe(self, p: Persistence, *names: str) -> tuple[Persistence, list[str], list[str]]:
        p, t = p.observe([finding_of(self.s, n) for n in names], self.thresholds)
        return p, [f.resource.name for f in t.activated], [f.resource.name for f in t.cleared]

    def test_fires_after_consecutive_sightings_only(self) -> None:
        p, act, _ = self.observe(Persistence(), "web")
        assert act == [] and p.active() == []
        p, act, _ = self.observe(p, "web")
        assert act == ["web"]
        p, act, _ = self.observe(p, "web")
        assert act == [], "an active finding activates once"

    def test_a_blip_does_not_fire(self) -> None:
        p, _, _ = self.observe(Persistence(), "web")
        p, _, _ = self.observe(p)
        p, act, _ = self.observe(p, "web")
        assert act == [] and p.active() == []

    def test_clears_after_consecutive_misses(self) -> None:
        p, _, _ = self.observe(Persistence(), "web")
        p, _, _ = self.observe(p, "web")
        p, _, cleared = self.observe(p)
        assert cleared == [] and [f.resource.name for f in p.active()] == ["web"]
        p, _, cleared = self.observe(p, "web")
        p, _, cleared = self.observe(p)
        assert cleared == [], "a sighting resets the miss count"
        p, _, cleared = self.observe(p)
        assert cleared == ["web"] and p.active() == []
