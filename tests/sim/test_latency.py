"""Latency is seen: the sim's latency alert, its probes, and latency alerts in mu.

A +500 ms delay on a service others call (online-boutique's product catalogue)
slows every entry point that calls it; the sim's ``HighRequestLatency`` rule
fires against each entry point's baseline (its latency when first seen
healthy), a probe with a latency limit fails, and both weigh in mu.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.controller.sim_probes import service_of
from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.config import DEFAULT_POLICY, ProbeConfig
from gitmedic.reconciler.forge import PrFilter
from gitmedic.reconciler.oracles import AlertsOracle, Observation, severity
from gitmedic.reconciler.oracles.probes import judged
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.alerts import slow
from gitmedic.sim.faults.runtime import network_delay
from tests.bot.run_world import app_repo
from tests.conftest import DATA

CALLED = "productcatalogservice"
FRONTEND = "http://frontend.boutique.svc.cluster.local/"
RULES = DATA / "alertmanager" / "prometheus-docs" / "api_v1_rules.response.json"


@pytest.fixture
def boutique(tmp_path: Path) -> SimCluster:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    return SimCluster(repo, app, namespace)


def _latency_alerts(cluster: SimCluster) -> dict[str, str]:
    return {
        a["labels"]["service"]: a["annotations"]["description"]
        for a in cluster.alerts()
        if a["labels"]["alertname"] == "HighRequestLatency"
    }


def test_a_500_ms_delay_on_a_called_service_fires_the_latency_alert_after_its_for(
    boutique: SimCluster,
) -> None:
    assert set(boutique.sim.latency_baseline) == {"boutique/frontend", "boutique/frontend-external"}
    boutique.sim.run(300)
    assert _latency_alerts(boutique) == {}, "a healthy app's jitter never fires"

    network_delay(boutique.sim, CALLED)
    boutique.sim.run(55)
    assert _latency_alerts(boutique) == {}, "pending for its 60 s"
    boutique.sim.run(10)

    fired = _latency_alerts(boutique)
    assert set(fired) == {"frontend", "frontend-external"}
    assert all(CALLED in why and "500 ms" in why for why in fired.values())
    boutique.sim.clear_perturbations()
    boutique.sim.run(10)
    assert _latency_alerts(boutique) == {}


def test_slow_is_twice_the_baseline_and_200_ms_more() -> None:
    assert not slow(150.0, 10.0) and slow(210.0, 10.0)
    assert not slow(1500.0, 800.0) and slow(1600.0, 800.0)


def test_the_sim_answers_a_configured_probe_with_its_latency_limit(boutique: SimCluster) -> None:
    limited = boutique.probe_oracle(ProbeConfig(FRONTEND, max_latency_ms=200))
    unlimited = boutique.probe_oracle(ProbeConfig(FRONTEND))
    assert limited is not None and unlimited is not None
    assert limited.measure().result["failing"] == 0

    network_delay(boutique.sim, CALLED)

    (probe,) = limited.measure().observation.probes
    assert not probe.ok and probe.latency_ms is not None and probe.latency_ms > 500
    assert "limit 200 ms" in probe.message
    assert unlimited.measure().result["failing"] == 0, "it answers: only the limit fails it"
    assert "within 200 ms" in limited.described


def test_a_probe_of_a_host_the_app_does_not_serve_fails_like_a_dns_lookup(
    boutique: SimCluster,
) -> None:
    oracle = boutique.probe_oracle(ProbeConfig("http://nosuch.boutique.svc/"))
    assert oracle is not None
    (probe,) = oracle.measure().observation.probes
    assert not probe.ok and "DNS lookup fails" in probe.message


@pytest.mark.parametrize(
    ("url", "service"),
    [
        ("http://frontend/", "boutique/frontend"),
        ("http://frontend.shop:8080/x", "shop/frontend"),
        ("https://frontend.shop.svc/", "shop/frontend"),
        ("http://frontend.shop.svc.cluster.local/", "shop/frontend"),
        ("https://shop.example.com/", None),
        ("http://127.0.0.1:9/healthz", None),
        ("http://localhost:8080/", None),
        ("http://[::1]:8080/", None),
    ],
)
def test_a_probe_url_names_a_service_as_cluster_dns_does(url: str, service: str | None) -> None:
    assert service_of(url, "boutique") == service


def test_a_slow_answer_fails_a_probe_with_a_limit_and_counts_in_mu() -> None:
    slow_answer = judged("http://shop/", 200, 730.0, 500.0)
    assert not slow_answer.ok and slow_answer.status == 200
    assert judged("http://shop/", 200, 730.0, None).ok
    assert severity(Observation(probes=(slow_answer,))) == 8


@respx.mock
def test_an_alertmanager_latency_alert_counts_in_mu_as_a_paging_alert() -> None:
    """Prometheus' documented HighRequestLatency (severity=page), as Alertmanager lists it."""
    rule = json.loads(RULES.read_text())["data"]["groups"][0]["rules"][0]
    (alert,) = rule["alerts"]
    listed = [{**alert, "status": {"state": "active"}}]
    respx.get("http://am.test:9093/api/v2/alerts").mock(httpx.Response(200, json=listed))
    oracle = AlertsOracle("http://am.test:9093", {})
    try:
        reading = oracle.measure()
    finally:
        oracle.close()
    assert [a.name for a in reading.observation.alerts] == ["HighRequestLatency"]
    assert severity(reading.observation) == 10


@pytest.mark.integration  # the whole loop (run_once)
def test_a_latency_fault_on_a_called_service_is_escalated_with_no_pull_request(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    cluster = SimCluster(repo, app, namespace)
    network_delay(cluster.sim, CALLED)
    config = LoopConfig("boutique", repo, app, namespace, policy=DEFAULT_POLICY)
    forge = LocalForge(repo)
    loop = Loop(config, cluster, forge, Journal(tmp_path / "j.sqlite"), list(builtin_registry()))

    assert loop.run_once() is False
    (report,) = loop.reports.values()
    assert {f.rule for f in report.incident.findings} == {"HighRequestLatency"}
    assert report.transactions == [] and forge.list_prs(PrFilter.ALL) == ()
    issue = forge.get_issue(int(report.escalated.removeprefix("issue #")))
    assert f"frontend -> {CALLED}: chaos: 500 ms network delay" in issue.body
    assert loop.mu_now() >= 20, "two critical latency alerts"
