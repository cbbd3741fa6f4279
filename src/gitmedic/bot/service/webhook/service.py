"""The webhook service without its web framework: accept, persist, queue, handle.

:class:`Service` owns the delivery store, the worker thread and the metrics;
:mod:`.app` puts HTTP in front of it. Keeping the two apart lets the monitor of
``gitmedic run`` share the same metrics and lets tests drive deliveries directly.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.bot.service.webhook.deliveries import Delivery, DeliveryStore, SeenElsewhere
from gitmedic.bot.service.webhook.handlers import HANDLERS, Deps
from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.bot.service.webhook.routes import Routes, repository
from gitmedic.bot.service.webhook.worker import Worker

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY = 5 * 1024 * 1024  # GitHub caps payloads at 25 MB; ours are far smaller
DEFAULT_IN_FLIGHT_BYTES = 16 * 1024 * 1024  # unauthenticated bodies being read, all together
DEFAULT_READ_TIMEOUT_S = 10.0  # GitHub sends a delivery at once; a slow one is an attack
DEFAULT_MAX_JSON_DEPTH = 64  # GitHub's payloads nest about 6 deep


@dataclass(frozen=True)
class ServiceConfig:
    secret: str
    state_dir: Path
    max_body_bytes: int = DEFAULT_MAX_BODY
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH


class Service:
    def __init__(
        self,
        config: ServiceConfig,
        deps: Deps | Routes,  # Routes: several repositories, by the payload's (serve --repos)
        metrics: Metrics | None = None,
        now: Callable[[], float] = time.time,
        *,
        seen: SeenElsewhere | None = None,  # the replicas' shared journal's record
    ) -> None:
        self.config, self.now = config, now
        self.routes = deps if isinstance(deps, Routes) else Routes.one(deps)
        self.metrics = metrics or Metrics()
        self.store = DeliveryStore(config.state_dir / "deliveries.sqlite", seen)
        self.worker = Worker(self._handle, self.metrics.queue_depth.set)
        # Why the process is not alive, or None: serve sets its monitor's heartbeat here.
        self.liveness: Callable[[], str | None] = lambda: None

    def start(self) -> None:
        backlog = self.store.queued()
        if backlog:
            log.info("resuming %d queued deliveries", len(backlog))
        self.worker.start(backlog)

    def stop(self) -> None:
        self.worker.stop()

    def ready(self) -> bool:
        return self.worker.running and self.store.ping()

    def handles(self, event: str) -> bool:
        return event in HANDLERS

    def refusal(self, event: str, payload: Mapping[str, Any]) -> str | None:
        """Why an authenticated delivery is acknowledged and ignored (a repository not
        served here: :mod:`.routes`), or None."""
        return self.routes.refusal(event, payload)

    def accept(self, delivery: Delivery) -> bool:
        """Persist and queue a delivery; False (and nothing queued) for a duplicate id."""
        if not self.store.accept(delivery, self.now()):
            return False
        self.worker.submit(delivery.id)
        return True

    def _handle(self, delivery_id: str) -> None:
        delivery = self.store.get(delivery_id)
        if delivery is None:
            return  # handled before a restart
        extra = {"event": delivery.event, "delivery": delivery_id}
        try:
            payload = json.loads(delivery.body)
            extra["repository"] = repository(payload) or "-"
            deps = self.routes.pick(delivery.event, payload)
            if deps is None:  # queued before a restart that no longer serves its repository
                status, result = "ignored", str(self.routes.refusal(delivery.event, payload))
            else:
                result = HANDLERS[delivery.event](payload, deps)
                status = "done"
        except Exception as exc:  # recorded, never retried in a loop
            status, result = "failed", f"{type(exc).__name__}: {exc}"
            log.exception("handling failed", extra=extra)
        self.store.finish(delivery_id, status, result)
        self.metrics.jobs.labels(event=delivery.event, status=status).inc()
        log.info("%s", result, extra={**extra, "result": status})
