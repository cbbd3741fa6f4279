"""The monitor keeps a failing detector's last findings and says so; never "no finding"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitmedic.bot.controller.monitor import Monitor
from gitmedic.bot.controller.wiring import DetectorFailure, live_findings
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.detectors.spec import Detector, DetectorSpec

SPEC = DetectorSpec(
    id="flaky",
    description="finds web, then raises while ``broken`` is set",
    kinds=frozenset({"Service"}),
    severity=Severity.CRITICAL,
    remediation="none",
    fire_after=1,
    clear_after=1,
)
WEB = Resource("Service", "shop", "web")


class Flaky:
    def __init__(self) -> None:
        self.broken = False

    def __call__(self, snapshot: Snapshot) -> Iterator[Finding]:
        if self.broken:
            raise KeyError("spec")
        yield SPEC.finding(WEB, "web selects no pods")


def snapshot(port: int) -> Snapshot:
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "port": port}
    return Snapshot([Obj(WEB, body)], mode=Mode.LIVE)


def test_a_failing_detector_keeps_its_last_findings_and_is_named() -> None:
    flaky = Flaky()
    monitor = Monitor([Detector(SPEC, flaky)])
    found, _ = monitor.evaluate(snapshot(80))
    assert [f.resource for f in found] == [WEB] and monitor.failing == {}

    flaky.broken = True
    found, transition = monitor.evaluate(snapshot(81))  # the Service changed: it runs again

    assert [f.resource for f in found] == [WEB], "the last findings are kept"
    assert transition.cleared == (), "a failure clears nothing"
    assert monitor.failing == {"flaky": "KeyError: 'spec'"}

    found, _ = monitor.evaluate(snapshot(81))  # nothing changed, yet a failing one runs again
    assert monitor.runs == 3 and monitor.failing

    flaky.broken = False
    monitor.evaluate(snapshot(81))
    assert monitor.failing == {}


class _Cluster:
    def snapshot(self) -> Snapshot:
        return snapshot(80)


def test_a_live_reading_with_a_failed_detector_raises_rather_than_reads_nothing() -> None:
    flaky = Flaky()
    flaky.broken = True
    with pytest.raises(DetectorFailure, match="detector flaky failed: KeyError"):
        live_findings(_Cluster(), [Detector(SPEC, flaky)])  # type: ignore[arg-type]
