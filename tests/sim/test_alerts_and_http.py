"""Alerts (Alertmanager v2 shape, exact firing after ``for``) and the loopback HTTP surface."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from gitmedic.sim.alerts import AlertRules, AlertTracker, Condition, fingerprint
from gitmedic.sim.faults import MANIFEST_FAULTS
from gitmedic.sim.server import serve
from gitmedic.sim.stamps import EPOCH
from tests.conftest import DATA
from tests.sim.faultcase import run_fault
from tests.sim.helpers import desired, sim_for


def _karma_alert() -> dict[str, object]:
    path = DATA / "alertmanager" / "karma-mock" / "alertmanager-0.31.0.api_v2_alerts_groups.json"
    alert: dict[str, object] = json.loads(path.read_text())[0]["alerts"][0]
    return alert


def test_alerts_have_alertmanagers_gettable_alert_shape(tmp_path: Path) -> None:
    outcome = run_fault(MANIFEST_FAULTS["memory-limit-too-small"], "online-boutique", tmp_path)

    names = {a["labels"]["alertname"] for a in outcome.after.alerts}
    # The old pod keeps serving (maxUnavailable 0), so replicas match: only the crash loop alerts.
    assert names == {"KubePodCrashLooping"}
    real = _karma_alert()
    for alert in outcome.after.alerts:
        assert set(alert) == set(real)
        assert set(alert["status"]) == set(real["status"])  # type: ignore[arg-type]
        assert alert["fingerprint"] == fingerprint(alert["labels"])


def test_prometheus_fingerprint_matches_a_known_value() -> None:
    # model.LabelSet{"alertname": "Test"}.Fingerprint() in prometheus/common
    assert fingerprint({}) == "cbf29ce484222325"
    assert len(fingerprint({"alertname": "Test"})) == 16


def test_alert_fires_exactly_after_its_for_duration_and_resolves_with_the_condition() -> None:
    cond = Condition({"alertname": "TargetDown", "job": "cart"}, {"summary": "down"}, 30.0)
    tracker = AlertTracker()
    for t in (0.0, 10.0, 20.0):
        tracker = tracker.observe(EPOCH + t, [cond])
    assert tracker.firing(EPOCH + 20) == []
    (waiting,) = tracker.pending(EPOCH + 20)  # Prometheus' pending: held, not yet for 30 s
    assert waiting["labels"]["alertname"] == "TargetDown"
    assert waiting["activeAt"] == "2026-01-01T00:00:00.000Z"

    tracker = tracker.observe(EPOCH + 30, [cond])
    assert tracker.pending(EPOCH + 30) == []
    (alert,) = tracker.firing(EPOCH + 30)
    assert alert["startsAt"] == "2026-01-01T00:00:30.000Z"
    assert alert["status"]["state"] == "active"
    assert tracker.observe(EPOCH + 40, []).firing(EPOCH + 40) == []


def test_a_short_outage_never_fires() -> None:
    snapshot = desired("online-boutique")
    sim = sim_for(snapshot)
    sim.rules = AlertRules(target_down_s=30)
    sim.run(120, step_s=5)
    assert sim.state().alerts == []

    sim.cluster.kill_pods("Deployment", "boutique", "redis-cart")
    sim.run(25, step_s=5)
    early = [a for a in sim.state().alerts if a["labels"]["alertname"] == "TargetDown"]

    assert early == []  # the pod is back before TargetDown's 30 s elapse


@pytest.mark.integration
def test_http_surface_serves_alerts_entrypoints_and_probes() -> None:
    sim = sim_for(desired("online-boutique"))
    sim.run(120, step_s=30)

    with serve(sim.state) as base:
        alerts = json.load(urllib.request.urlopen(f"{base}/api/v2/alerts", timeout=5))
        entry = json.load(urllib.request.urlopen(f"{base}/entrypoints", timeout=5))
        probe = urllib.request.urlopen(f"{base}/probe/boutique/frontend-external", timeout=5)

    assert alerts == []
    assert entry["boutique/frontend-external"]["success_rate"] == 1.0
    assert probe.status == 200
