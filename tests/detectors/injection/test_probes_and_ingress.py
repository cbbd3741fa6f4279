"""Probe ports and Ingress backends broken in real apps."""

from __future__ import annotations

from typing import Any

import pytest

from tests.detectors.injection._apps import Body, added, container, findings, mutated, snapshot


@pytest.mark.parametrize(
    ("app", "workload", "probe", "handler", "port", "rule", "severity"),
    [
        # Readiness moved off the served port while liveness still uses it: the probes disagree.
        ("online-boutique", "adservice", "readinessProbe", "grpc", 9556, "readiness", "warning"),
        # A port name the container does not declare can never resolve.
        ("sock-shop", "front-end", "livenessProbe", "httpGet", "http", "liveness", "critical"),
        # The only probe, on another number: it may be an undeclared health port.
        (
            "train-ticket",
            "ts-order-service",
            "readinessProbe",
            "tcpSocket",
            12032,
            "readiness",
            "info",
        ),
    ],
)
def test_probe_on_an_undeclared_port(
    app: str, workload: str, probe: str, handler: str, port: Any, rule: str, severity: str
) -> None:
    name = workload if app != "online-boutique" else "server"

    def change(body: Body) -> None:
        container(body, name)[probe][handler]["port"] = port

    assert findings("probe-port", snapshot(app)) == []
    found = findings("probe-port", mutated(app, "Deployment", workload, change))
    assert [(f.rule, f.resource.name, f.severity.value) for f in found] == [
        (f"{rule}-probe-port", workload, severity)
    ]
    assert found[0].params["path"].endswith(f".{probe}.{handler}.port")


def _ingress(app: str, backend_service: str, port: dict[str, Any]) -> Body:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": f"{app}-web"},
        "spec": {
            "rules": [
                {
                    "host": f"{app}.example.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": backend_service, "port": port}},
                            }
                        ]
                    },
                }
            ]
        },
    }


@pytest.mark.parametrize(
    ("app", "service", "good_port", "bad_port", "missing"),
    [
        ("online-boutique", "frontend-external", {"number": 80}, {"number": 8080}, "frontend-ext"),
        ("sock-shop", "front-end", {"number": 80}, {"name": "http"}, "frontend"),
        ("astronomy-shop-otel-demo", "frontend-proxy", {"number": 8080}, {"number": 80}, "proxy"),
    ],
)
def test_ingress_backend_port_and_service(
    app: str, service: str, good_port: dict[str, Any], bad_port: dict[str, Any], missing: str
) -> None:
    assert findings("ingress-backend", added(app, _ingress(app, service, good_port))) == []
    wrong_port = findings("ingress-backend", added(app, _ingress(app, service, bad_port)))
    gone = findings("ingress-backend", added(app, _ingress(app, missing, good_port)))
    assert [(f.rule, f.resource.name) for f in wrong_port + gone] == [
        ("port-missing", f"{app}-web"),
        ("service-missing", f"{app}-web"),
    ]
    assert wrong_port[0].params["path"] == "spec.rules[0].http.paths[0].backend"
