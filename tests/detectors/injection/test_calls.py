"""Faults on the call graph of real apps: addresses, scaled-down and isolated callees."""

from __future__ import annotations

import pytest

from tests.detectors.injection._apps import (
    Body,
    added,
    env,
    findings,
    mutated,
    namespace,
    removed,
    snapshot,
)


@pytest.mark.parametrize(
    "app", ["online-boutique", "astronomy-shop-otel-demo", "teastore", "sock-shop"]
)
def test_env_addresses_of_real_apps_are_quiet_at_warning(app: str) -> None:
    found = findings("env-service-address", snapshot(app), at_least="warning")
    # otel-demo's only one is upstream's real bug (opentelemetry-demo#2828).
    assert [(f.resource.name, f.params["env"]) for f in found] == (
        [("frontend-proxy", "FLAGD_UI_HOST")] if app == "astronomy-shop-otel-demo" else []
    )


@pytest.mark.parametrize(
    ("app", "workload", "container", "var", "value"),
    [
        ("online-boutique", "checkoutservice", "server", "CART_SERVICE_ADDR", "cartservice:7071"),
        ("astronomy-shop-otel-demo", "checkout", "checkout", "KAFKA_ADDR", "kafka:9094"),
        ("teastore", "teastore-persistence", "teastore-persistence", "DB_PORT", "3307"),
    ],
)
def test_wrong_port_in_env_is_a_port_mismatch(
    app: str, workload: str, container: str, var: str, value: str
) -> None:
    def change(body: Body) -> None:
        env(body, container, var)["value"] = value

    found = findings(
        "env-service-address",
        mutated(app, "Deployment", workload, change),
        at_least="warning",
    )
    mismatches = [f for f in found if f.rule == "port-mismatch"]
    assert [(f.resource.name, f.params["container"]) for f in mismatches] == [(workload, container)]
    assert var in (mismatches[0].params["env"], mismatches[0].params["port_env"])


@pytest.mark.parametrize(
    ("app", "service", "caller"),
    [("online-boutique", "emailservice", "checkoutservice"), ("sock-shop", "user-db", "user")],
)
def test_deleted_service_still_addressed_is_critical(app: str, service: str, caller: str) -> None:
    found = findings("env-service-address", removed(app, "Service", service), at_least="warning")
    assert [(f.rule, f.resource.name, f.severity.value, f.params["service"]) for f in found] == [
        ("service-missing", caller, "critical", service)
    ]


@pytest.mark.parametrize(
    ("app", "workload", "callers"),
    [
        (
            "online-boutique",
            "productcatalogservice",
            {"frontend", "checkoutservice", "recommendationservice"},
        ),
        ("astronomy-shop-otel-demo", "valkey-cart", {"cart"}),
        ("teastore", "teastore-registry", None),
    ],
)
def test_called_workload_scaled_to_zero(app: str, workload: str, callers: set[str] | None) -> None:
    def zero(body: Body) -> None:
        body["spec"]["replicas"] = 0

    assert findings("scaled-to-zero", snapshot(app)) == []
    found = findings("scaled-to-zero", mutated(app, "Deployment", workload, zero))
    assert [(f.resource.name, f.severity.value) for f in found] == [(workload, "critical")]
    if callers is not None:
        assert {c["name"] for c in found[0].params["callers"]} == callers


def _deny_all(app: str, labels: dict[str, str]) -> Body:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "injected-deny", "namespace": namespace(app)},
        "spec": {"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress"]},
    }


@pytest.mark.parametrize(
    ("app", "labels", "workload"),
    [
        ("online-boutique", {"app": "currencyservice"}, "currencyservice"),
        (
            "astronomy-shop-otel-demo",
            {"opentelemetry.io/name": "product-catalog"},
            "product-catalog",
        ),
        ("teastore", {"run": "teastore-db"}, "teastore-db"),
    ],
)
def test_deny_all_policy_isolates_a_called_workload(
    app: str, labels: dict[str, str], workload: str
) -> None:
    assert findings("network-policy-isolation", snapshot(app)) == []
    found = findings("network-policy-isolation", added(app, _deny_all(app, labels)))
    assert [(f.resource.kind, f.resource.name) for f in found] == [
        ("NetworkPolicy", "injected-deny")
    ]
    assert found[0].params["workload"]["name"] == workload


def test_policy_admitting_the_callers_is_quiet_on_a_real_app() -> None:
    app = "online-boutique"
    policy = _deny_all(app, {"app": "cartservice"})
    policy["spec"]["ingress"] = [
        {"from": [{"podSelector": {"matchLabels": {"app": "frontend"}}}]},
        {
            "from": [{"podSelector": {"matchLabels": {"app": "checkoutservice"}}}],
            "ports": [{"port": 7070}],
        },
    ]
    assert findings("network-policy-isolation", added(app, policy)) == []
    policy["spec"]["ingress"].pop(0)
    found = findings("network-policy-isolation", added(app, policy))
    assert [c["name"] for c in found[0].params["callers"]] == ["frontend"]
