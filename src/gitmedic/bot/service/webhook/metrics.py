"""Prometheus metrics of one service, in its own registry (never the global one).

An own :class:`CollectorRegistry` keeps two services in one process (tests) from
colliding, and keeps library metrics out of ``/metrics``. The monitor
(``gitmedic run``) records incidents, transactions, detector time and tokens
through the same object.

Label values come from closed sets only: the ``event`` of a delivery is read from
an unauthenticated header, so an event gitmedic does not handle is counted as
``other`` (and a missing one as ``-``); one series per header value would let
anyone grow ``/metrics`` without bound.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from gitmedic.bot.service.webhook.handlers import HANDLERS

OTHER_EVENT = "other"
NO_EVENT = "-"


class Metrics:
    def __init__(self, events: Iterable[str] = HANDLERS) -> None:
        """``events``: the event names counted under their own label (the handled ones)."""
        self.events = frozenset(events)
        self.registry = CollectorRegistry()
        r = self.registry
        self.incidents = Gauge("gitmedic_incidents_open", "Open incidents.", registry=r)
        self.transactions = Counter(
            "gitmedic_transactions", "Finished transactions by outcome.", ["outcome"], registry=r
        )
        self.detector_seconds = Histogram(
            "gitmedic_detector_evaluation_seconds",
            "Time to evaluate the detectors over one snapshot.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=r,
        )
        self.tokens = Counter("gitmedic_llm_tokens", "LLM tokens spent.", registry=r)
        self.queue_depth = Gauge("gitmedic_queue_depth", "Webhook jobs waiting.", registry=r)
        self.deliveries = Counter(
            "gitmedic_webhook_deliveries",
            "Webhook deliveries by event and result.",
            ["event", "result"],
            registry=r,
        )
        self.jobs = Counter(
            "gitmedic_webhook_jobs",
            "Handled deliveries by event and status.",
            ["event", "status"],
            registry=r,
        )
        # Per app (label values come from the config, a closed set): what an operator
        # of many apps alerts on, e.g. an app whose last evaluation is old.
        self.app_evaluated = Gauge(
            "gitmedic_app_last_evaluation_timestamp_seconds",
            "When the monitor last evaluated the app (Unix time).",
            ["app"],
            registry=r,
        )
        self.app_incidents = Gauge(
            "gitmedic_app_incidents_open", "Open incidents of the app.", ["app"], registry=r
        )
        self.app_transactions = Gauge(
            "gitmedic_app_transactions",
            "The app's unsettled transactions by phase.",
            ["app", "phase"],
            registry=r,
        )
        # What the monitor could not judge: each a reason the app's health is not known in
        # full, which a log line alone leaves unseen.
        self.app_judged_partly = Gauge(
            "gitmedic_app_judged_partly",
            "1 when the app's objects cannot be told apart from a neighbour's that does not "
            "render: only what the app renders itself is judged, and it is never healthy.",
            ["app"],
            registry=r,
        )
        self.app_not_judged = Gauge(
            "gitmedic_app_findings_not_judged",
            "Findings set aside at the last evaluation: about objects that may be a neighbour's.",
            ["app"],
            registry=r,
        )
        self.app_detectors_failing = Gauge(
            "gitmedic_app_detectors_failing",
            "Detectors whose last evaluation failed (their earlier findings are kept).",
            ["app"],
            registry=r,
        )

        self._open_by_app: dict[str, int] = {}

    def open_incidents(self, app: str, count: int) -> None:
        """An app's open incidents, and the total over the apps of this process."""
        self._open_by_app[app] = count
        self.app_incidents.labels(app=app).set(count)
        self.incidents.set(sum(self._open_by_app.values()))

    def delivery(self, event: str, result: str) -> None:
        self.deliveries.labels(event=self.event_label(event), result=result).inc()

    def event_label(self, event: str) -> str:
        if not event:
            return NO_EVENT
        return event if event in self.events else OTHER_EVENT

    def render(self) -> bytes:
        return generate_latest(self.registry)
