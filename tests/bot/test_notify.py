"""Notifications of escalations and reverts: Slack's shape, scrubbed, never blocking the monitor."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from gitmedic.bot.controller.report import Event
from gitmedic.bot.service.monitor_metrics import MonitorMetrics
from gitmedic.bot.service.notify import MAX_TEXT, Notifier, NotifyConfigError, check_url
from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.reconciler.redact import REGISTRY
from gitmedic.reconciler.transaction import Outcome, Phase

HOOK = "https://hooks.slack.com/services/T000/B000/notify-unit-secret"


class Posted:
    def __init__(self, fail: bool = False) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.fail = fail

    def __call__(self, url: str, body: bytes) -> None:
        if self.fail:
            raise OSError(f"connection refused by {url}")
        self.bodies.append(json.loads(body))


@pytest.mark.parametrize(
    "url", ["http://hooks.example.com/x", "ftp://127.0.0.1/x", "https:///nohost", "file:///etc"]
)
def test_only_https_or_loopback_http_is_accepted(url: str) -> None:
    with pytest.raises(NotifyConfigError, match="https://"):
        check_url(url)


def test_loopback_http_is_accepted() -> None:
    assert check_url("http://127.0.0.1:9/hook") == "http://127.0.0.1:9/hook"


def test_the_message_is_scrubbed_capped_and_the_url_is_a_secret() -> None:
    posted = Posted()
    notifier = Notifier(HOOK, post=posted)
    REGISTRY.add("db-password-9f3a")
    notifier.send("escalated: env DB_PASSWORD=db-password-9f3a " + "x" * 5000)
    notifier.wait()
    (body,) = posted.bodies
    assert "db-password-9f3a" not in body["text"] and len(body["text"]) == MAX_TEXT
    assert HOOK not in REGISTRY.scrub(f"posting to {HOOK}")


def test_a_failed_delivery_is_logged_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    notifier = Notifier(HOOK, post=Posted(fail=True))
    with caplog.at_level(logging.WARNING):
        notifier.send("reverted")
        notifier.wait()
    assert "notification not delivered" in caplog.text
    assert HOOK not in caplog.text


def _state(txn: str, outcome: Outcome, phase: Phase, pr: int | None = None) -> SimpleNamespace:
    plan = SimpleNamespace(txn_id=txn, strategy="playbook", title=f"restore {txn}")
    return SimpleNamespace(plan=plan, outcome=outcome, phase=phase, pr=pr)


def test_a_revert_and_an_escalation_are_told_once_and_apps_are_measured_apart() -> None:
    posted = Posted()
    journal = SimpleNamespace(states=[])
    journal.transactions = lambda: journal.states
    metrics = Metrics()
    notifier = Notifier(HOOK, post=posted)
    shop = MonitorMetrics(metrics, journal, "shop", notifier=notifier, now=lambda: 1.7e9)
    loop = SimpleNamespace(
        incidents=SimpleNamespace(open=["i-1", "i-2"]),
        monitor=SimpleNamespace(last_seconds=0.1, unsure=("f-1", "f-2"), failing={"d": "timeout"}),
        config=SimpleNamespace(undivided="cannot tell app shop's objects apart"),
    )
    journal.states = [
        _state("t-1", Outcome.REVERTED, Phase.RESTORED, pr=7),
        _state("t-2", Outcome.IN_FLIGHT, Phase.MERGED),
    ]
    shop.after_step(loop)
    shop.after_step(loop)  # the same revert is not told twice
    shop.on_event(Event(0.0, "escalated", "told a person in issue #9: held"))
    notifier.wait()
    assert [b["text"] for b in posted.bodies] == [
        "gitmedic reverted restore t-1 (PR #7) in shop: the app was worse after it",
        "gitmedic escalated an incident of shop: told a person in issue #9: held",
    ]
    web = MonitorMetrics(metrics, SimpleNamespace(transactions=list), "web")
    quiet = SimpleNamespace(last_seconds=0.1, unsure=(), failing={})
    web.after_step(
        SimpleNamespace(
            incidents=SimpleNamespace(open=[]), monitor=quiet, config=SimpleNamespace(undivided="")
        )
    )
    text = metrics.render().decode()
    assert 'gitmedic_app_incidents_open{app="shop"} 2.0' in text
    assert 'gitmedic_app_incidents_open{app="web"} 0.0' in text
    assert "gitmedic_incidents_open 2.0" in text
    assert 'gitmedic_app_last_evaluation_timestamp_seconds{app="shop"} 1.7e+09' in text
    assert 'gitmedic_app_transactions{app="shop",phase="merged"} 1.0' in text
    assert 'gitmedic_app_transactions{app="web",phase="merged"} 0.0' in text
    assert 'gitmedic_app_judged_partly{app="shop"} 1.0' in text
    assert 'gitmedic_app_judged_partly{app="web"} 0.0' in text
    assert 'gitmedic_app_findings_not_judged{app="shop"} 2.0' in text
    assert 'gitmedic_app_findings_not_judged{app="web"} 0.0' in text
    assert 'gitmedic_app_detectors_failing{app="shop"} 1.0' in text
    assert 'gitmedic_app_detectors_failing{app="web"} 0.0' in text
