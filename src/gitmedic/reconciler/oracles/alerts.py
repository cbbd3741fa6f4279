"""The alerts oracle: firing alerts of the app, from Alertmanager or Prometheus.

- Alertmanager API v2: ``GET /api/v2/alerts?active=true&silenced=false&inhibited=false``
  with one ``filter=label="value"`` per matcher; alerts whose ``status.state`` is
  ``active`` count (silenced and inhibited ones are ``suppressed``).
- Prometheus: ``GET /api/v1/alerts``; alerts whose ``state`` is ``firing`` count;
  ``pending`` ones have not fired yet and are reported apart (``Observation.pending``),
  so a checkpoint knows a condition that already held (Alertmanager never sees them).

Matchers (by default ``{"namespace": <the app's namespace>}``) are applied here
too, since Prometheus does not filter and a proxy may ignore the parameters.
An answer we cannot use (no connection, non-2xx, invalid JSON, an unexpected
shape) raises, which the measurement loop records as an Error: an alert source
that is down never passes as "no alerts".

``AlertListOracle`` judges the same Alertmanager v2 list read in-process from a
function (the sim's alert rules), with the same matchers and the same reading.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from gitmedic.reconciler.http_client import LazyHttpClient
from gitmedic.reconciler.oracles.metric import MetricSpec, Reading
from gitmedic.reconciler.oracles.observation import FiringAlert, Observation

if TYPE_CHECKING:
    import httpx

DEFAULT_SPEC = MetricSpec(failure_condition='result["firing"] > 0')


class AlertSource(enum.Enum):
    ALERTMANAGER = "alertmanager"
    PROMETHEUS = "prometheus"


class AlertSourceError(Exception):
    """The alert source could not be read."""


class AlertsOracle(LazyHttpClient):
    def __init__(
        self,
        url: str,
        matchers: Mapping[str, str],
        *,
        source: AlertSource = AlertSource.ALERTMANAGER,
        spec: MetricSpec = DEFAULT_SPEC,
        name: str = "alerts",
        request_timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        verify_tls: bool = True,
    ) -> None:
        super().__init__(
            request_timeout=request_timeout, transport=transport, verify_tls=verify_tls
        )
        self.url = url.rstrip("/")
        self.matchers = dict(matchers)
        self.source = source
        self.spec = spec
        self.name = name

    @property
    def described(self) -> str:
        return f"{self.source.value.capitalize()} at {self.url}"

    def measure(self) -> Reading:
        if self.source is AlertSource.ALERTMANAGER:
            params = [("active", "true"), ("silenced", "false"), ("inhibited", "false")]
            params += [("filter", f'{k}="{v}"') for k, v in sorted(self.matchers.items())]
            body = self._get("/api/v2/alerts", params)
            return _reading(_alertmanager_firing(body), self.matchers)
        body = self._get("/api/v1/alerts", [])
        return _reading(
            _prometheus_in(body, "firing"), self.matchers, _prometheus_in(body, "pending")
        )

    def _get(self, path: str, params: list[tuple[str, str]]) -> Any:
        import httpx

        try:
            response = self.client().get(self.url + path, params=tuple(params))
        except httpx.HTTPError as err:
            raise AlertSourceError(f"{self.source.value} unreachable: {err!r}") from None
        if not response.is_success:
            raise AlertSourceError(f"{self.source.value} answered HTTP {response.status_code}")
        try:
            return json.loads(response.content)
        except ValueError:
            raise AlertSourceError(f"{self.source.value} answered invalid JSON") from None


class AlertListOracle:
    """Alerts from a function answering Alertmanager's ``GET /api/v2/alerts`` list, and
    optionally one answering the pending ones in the same shape (the sim's rules)."""

    def __init__(
        self,
        read: Callable[[], Any],
        matchers: Mapping[str, str],
        *,
        described: str,
        spec: MetricSpec = DEFAULT_SPEC,
        name: str = "alerts",
        read_pending: Callable[[], Any] | None = None,
    ) -> None:
        self.read = read
        self.read_pending = read_pending
        self.matchers = dict(matchers)
        self.described = described
        self.spec = spec
        self.name = name

    def measure(self) -> Reading:
        pending = [_labels(a) for a in self.read_pending()] if self.read_pending else []
        return _reading(_alertmanager_firing(self.read()), self.matchers, pending)


def _reading(
    firing: list[Mapping[str, Any]],
    matchers: Mapping[str, str],
    pending: list[Mapping[str, Any]] | None = None,
) -> Reading:
    alerts, waiting = _matching(firing, matchers), _matching(pending or [], matchers)
    result = {"firing": len(alerts), "alerts": [a.name for a in alerts]}
    return Reading(result, Observation(alerts=alerts, pending=waiting))


def _matching(
    labelled: list[Mapping[str, Any]], matchers: Mapping[str, str]
) -> tuple[FiringAlert, ...]:
    return tuple(
        sorted(
            FiringAlert.from_labels(labels)
            for labels in labelled
            if all(labels.get(k) == v for k, v in matchers.items())
        )
    )


def _labels(alert: Any) -> Mapping[str, Any]:
    labels = alert.get("labels") if isinstance(alert, Mapping) else None
    if not isinstance(labels, Mapping):
        raise AlertSourceError("an alert has no labels")
    return labels


def _alertmanager_firing(body: Any) -> list[Mapping[str, Any]]:
    if not isinstance(body, list):
        raise AlertSourceError("Alertmanager /api/v2/alerts did not answer a list of alerts")
    return [
        _labels(a) for a in body if isinstance(a, Mapping) and _state(a.get("status")) == "active"
    ]


def _state(status: Any) -> Any:
    return status.get("state") if isinstance(status, Mapping) else None


def _prometheus_in(body: Any, state: str) -> list[Mapping[str, Any]]:
    data = body.get("data") if isinstance(body, Mapping) else None
    alerts = data.get("alerts") if isinstance(data, Mapping) else None
    if (
        not isinstance(body, Mapping)
        or body.get("status") != "success"
        or not isinstance(alerts, list)
    ):
        raise AlertSourceError("Prometheus /api/v1/alerts did not answer success with alerts")
    return [_labels(a) for a in alerts if isinstance(a, Mapping) and a.get("state") == state]
