"""Selector and traffic-policy faults injected into real apps' Services."""

from __future__ import annotations

import pytest

from tests.detectors.injection._apps import Body, findings, mutated, snapshot


def _widen(selector: dict[str, str]) -> object:
    def change(body: Body) -> None:
        body["spec"]["selector"] = selector

    return change


@pytest.mark.parametrize(
    ("app", "service", "selector", "expected"),
    [
        # The selector keeps only a label many pods of the app carry.
        ("social-network", "user-service", {"death-star-project": "social-network"}, 31),
        ("teastore", "teastore-auth", {"app": "teastore"}, 7),
        (
            "astronomy-shop-otel-demo",
            "cart",
            {"app.kubernetes.io/instance": "opentelemetry-demo"},
            5,
        ),
    ],
)
def test_polluted_selector_fires_on_the_widened_service(
    app: str, service: str, selector: dict[str, str], expected: int
) -> None:
    assert findings("service-selector-polluted", snapshot(app)) == []
    found = findings(
        "service-selector-polluted", mutated(app, "Service", service, _widen(selector))
    )
    assert [(f.resource.kind, f.resource.name, f.severity.value) for f in found] == [
        ("Service", service, "critical")
    ]
    assert len(found[0].params["workloads"]) == expected


@pytest.mark.parametrize(
    ("app", "service", "workload", "severity"),
    [
        ("hotel-reservation", "geo", "geo", "critical"),
        ("train-ticket", "ts-order-service", "ts-order-service", "critical"),
    ],
)
def test_node_local_traffic_policy_fires_on_the_service(
    app: str, service: str, workload: str, severity: str
) -> None:
    def local(body: Body) -> None:
        body["spec"]["internalTrafficPolicy"] = "Local"

    assert findings("internal-traffic-policy-local", snapshot(app)) == []
    found = findings("internal-traffic-policy-local", mutated(app, "Service", service, local))
    assert [(f.resource.name, f.severity.value) for f in found] == [(service, severity)]
    assert [w["name"] for w in found[0].params["workloads"]] == [workload]
