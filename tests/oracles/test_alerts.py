"""The alerts oracle against real Alertmanager and Prometheus payloads (respx).

karma's recording is ``/api/v2/alerts/groups``; each group's ``alerts[]`` entry is
a GettableAlert, exactly what ``/api/v2/alerts`` lists, so the flat body is built
from the groups (one entry per fingerprint, as Alertmanager answers).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import (
    AlertsOracle,
    AlertSource,
    AlertSourceError,
    MetricSpec,
)
from gitmedic.reconciler.transaction import VerdictPhase
from tests.conftest import DATA
from tests.support.stepping import window

AM = "http://alertmanager.test:9093"
PROM = "http://prometheus.test:9090"
GROUPS = DATA / "alertmanager" / "karma-mock" / "alertmanager-0.31.0.api_v2_alerts_groups.json"
PROM_ALERTS = DATA / "alertmanager" / "prometheus-docs" / "api_v1_alerts.response.json"


def flat_alerts() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for group in json.loads(GROUPS.read_text()):
        for alert in group["alerts"]:
            seen.setdefault(alert["fingerprint"], alert)
    return list(seen.values())


@pytest.fixture
def oracles() -> Iterator[list[AlertsOracle]]:
    made: list[AlertsOracle] = []
    yield made
    for o in made:
        o.close()


def make(made: list[AlertsOracle], url: str = AM, **kw: Any) -> AlertsOracle:
    made.append(AlertsOracle(url, kw.pop("matchers", {"cluster": "prod"}), **kw))
    return made[-1]


def test_the_flat_body_has_every_recorded_alert_once() -> None:
    alerts = flat_alerts()
    assert len(alerts) == 12
    assert sum(a["status"]["state"] == "active" for a in alerts) == 8


@respx.mock
def test_active_alerts_matching_the_app_are_firing(oracles: list[AlertsOracle]) -> None:
    route = respx.get(f"{AM}/api/v2/alerts").mock(
        return_value=httpx.Response(200, json=flat_alerts())
    )
    reading = make(oracles).measure()
    assert reading.result == {
        "firing": 3,
        "alerts": ["Host_Down", "Host_Down", "Memory_Usage_Too_High"],
    }
    assert {a.severity for a in reading.observation.alerts} == {""}
    params = route.calls.last.request.url.params
    assert params["active"] == "true" and params["silenced"] == "false"
    assert params.get_list("filter") == ['cluster="prod"']


@respx.mock
def test_suppressed_alerts_do_not_count(oracles: list[AlertsOracle]) -> None:
    respx.get(f"{AM}/api/v2/alerts").mock(return_value=httpx.Response(200, json=flat_alerts()))
    reading = make(oracles, matchers={"cluster": "dev"}).measure()
    assert reading.result["alerts"] == ["HTTP_Probe_Failed"]  # web2; web1 and Host_Down silenced


@respx.mock
def test_namespace_filter_on_relabelled_copies(oracles: list[AlertsOracle]) -> None:
    alerts = flat_alerts()
    for a in alerts:
        a["labels"]["namespace"] = "shop" if a["labels"]["instance"] == "server2" else "other"
    alerts[0]["labels"]["severity"] = "critical"
    respx.get(f"{AM}/api/v2/alerts").mock(return_value=httpx.Response(200, json=alerts))
    reading = make(oracles, matchers={"namespace": "shop"}).measure()
    assert reading.result["alerts"] == ["Host_Down", "Memory_Usage_Too_High"]


@respx.mock
def test_prometheus_firing_alerts(oracles: list[AlertsOracle]) -> None:
    body = json.loads(PROM_ALERTS.read_text())
    respx.get(f"{PROM}/api/v1/alerts").mock(return_value=httpx.Response(200, json=body))
    source = AlertSource.PROMETHEUS
    hit = make(oracles, PROM, source=source, matchers={"alertname": "my-alert"}).measure()
    assert hit.result["firing"] == 1
    miss = make(oracles, PROM, source=source, matchers={"namespace": "shop"}).measure()
    assert miss.result["firing"] == 0
    body["data"]["alerts"][0]["state"] = "pending"
    respx.get(f"{PROM}/api/v1/alerts").mock(return_value=httpx.Response(200, json=body))
    pending = make(oracles, PROM, source=source, matchers={}).measure()
    assert pending.result["firing"] == 0
    # not firing yet, but reported apart: a checkpoint counts its condition as "before"
    assert [a.name for a in pending.observation.pending] == ["my-alert"]
    assert pending.observation.alerts == ()


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (httpx.ConnectError("connection refused"), "unreachable"),
        (httpx.Response(503, text="down"), "HTTP 503"),
        (httpx.Response(200, text="<html>"), "invalid JSON"),
        (httpx.Response(200, json={"data": []}), "list of alerts"),
        (httpx.Response(200, json=[{"status": {"state": "active"}}]), "no labels"),
    ],
)
@respx.mock
def test_an_unusable_answer_raises(answer: Any, words: str, oracles: list[AlertsOracle]) -> None:
    route = respx.get(f"{AM}/api/v2/alerts")
    route.mock(side_effect=answer) if isinstance(answer, Exception) else route.mock(
        return_value=answer
    )
    with pytest.raises(AlertSourceError, match=words):
        make(oracles).measure()


@respx.mock
def test_alertmanager_down_is_an_error_never_a_pass(oracles: list[AlertsOracle]) -> None:
    respx.get(f"{AM}/api/v2/alerts").mock(side_effect=httpx.ConnectError("refused"))
    clock = FakeClock()
    oracle = make(
        oracles, spec=MetricSpec(interval=30, count=4, failure_condition='result["firing"] > 0')
    )
    verdict = window([oracle], clock).verdict
    assert verdict.phase is VerdictPhase.ERROR and clock.now() == 90
    assert verdict.mu == 0  # nothing observed: the Error phase, not mu, carries the verdict


@respx.mock
def test_firing_alerts_fail_the_oracle(oracles: list[AlertsOracle]) -> None:
    respx.get(f"{AM}/api/v2/alerts").mock(return_value=httpx.Response(200, json=flat_alerts()))
    verdict = window([make(oracles)], FakeClock()).verdict
    assert verdict.phase is VerdictPhase.FAILED and verdict.mu == 12.0  # 3 unlabelled x 4
