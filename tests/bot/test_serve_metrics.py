"""serve's /metrics, monitor side: incidents, transactions by outcome, detector time, tokens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.report import Event
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.monitor_metrics import MonitorMetrics
from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.transaction import Journal
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo


def value(text: str, sample: str) -> float:
    match = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    assert match, f"{sample} not in /metrics"
    return float(match.group(1))


@pytest.mark.integration
def test_the_monitor_records_incidents_outcomes_detector_time_and_tokens(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)  # catalog's targetPort broken on main
    metrics, journal = Metrics(), Journal(tmp_path / "j.sqlite")
    recorder = MonitorMetrics(metrics, journal)
    events: list[Event] = []

    def on_event(event: Event) -> None:
        events.append(event)
        recorder.on_event(event)

    config = LoopConfig("shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY)
    loop = Loop(config, SimCluster(repo, APP, NAMESPACE), LocalForge(repo), journal,
                list(builtin_registry()), on_event=on_event)  # fmt: skip
    steps, opened = 0, 0.0
    while steps < 40 and not (loop.reports and loop.healthy):
        loop.tick()
        recorder.after_step(loop)
        steps += 1
        opened = max(opened, value(metrics.render().decode(), "gitmedic_incidents_open"))
    text = metrics.render().decode()

    assert opened == 1.0 and value(text, "gitmedic_incidents_open") == 0.0
    assert value(text, 'gitmedic_transactions_total{outcome="committed"}') == 1.0
    assert value(text, "gitmedic_detector_evaluation_seconds_count") == steps
    assert value(text, "gitmedic_detector_evaluation_seconds_sum") > 0
    assert value(text, "gitmedic_llm_tokens_total") == 0.0  # playbook: no model asked
    again = Metrics()  # a restart: the journal's old outcome is not this process's
    MonitorMetrics(again, journal).after_step(loop)
    assert 'outcome="committed"' not in again.render().decode()
