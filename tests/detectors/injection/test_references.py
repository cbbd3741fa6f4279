"""missing-reference: references broken in real apps, one per kind of reference."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gitmedic.detectors import Snapshot
from tests.detectors.injection._apps import (
    Body,
    container,
    findings,
    mutated,
    removed,
    snapshot,
)


def _pvc_broken(body: Body) -> None:
    body["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] += "-x"


def _env_from_configmap(name: str, key: str) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        target = container(body, body["spec"]["template"]["spec"]["containers"][0]["name"])
        ref = {"configMapKeyRef": {"name": name, "key": key}}
        target.setdefault("env", []).append({"name": "INJECTED", "valueFrom": ref})

    return change


def _service_account(name: str) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["spec"]["template"]["spec"]["serviceAccountName"] = name

    return change


CASES: list[tuple[str, Callable[[], Snapshot], str, str, str]] = [
    # (app, injected snapshot, rule, workload, missing name)
    (
        "hotel-reservation",
        lambda: mutated("hotel-reservation", "Deployment", "mongodb-user", _pvc_broken),
        "pvc-missing", "mongodb-user", "user-pvc-x",
    ),
    (
        "hotel-reservation",
        lambda: removed("hotel-reservation", "PersistentVolumeClaim", "rate-pvc"),
        "pvc-missing", "mongodb-rate", "rate-pvc",
    ),
    (
        "astronomy-shop-otel-demo",
        lambda: removed("astronomy-shop-otel-demo", "ConfigMap", "flagd-config"),
        "configmap-missing", "flagd", "flagd-config",
    ),
    (
        "astronomy-shop-otel-demo",
        lambda: mutated(
            "astronomy-shop-otel-demo", "Deployment", "cart",
            _env_from_configmap("flagd-config", "no-such-key"),
        ),
        "configmap-key-missing", "cart", "flagd-config",
    ),
    (
        "online-boutique",
        lambda: removed("online-boutique", "ServiceAccount", "paymentservice"),
        "serviceaccount-missing", "paymentservice", "paymentservice",
    ),
    (
        "train-ticket",
        lambda: mutated(
            "train-ticket", "Deployment", "ts-order-service", _service_account("ts-order")
        ),
        "serviceaccount-missing", "ts-order-service", "ts-order",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("app", "inject", "rule", "workload", "name"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
def test_broken_reference_is_reported_on_its_workload(
    app: str, inject: Callable[[], Snapshot], rule: str, workload: str, name: str
) -> None:
    before = {f.fingerprint for f in findings("missing-reference", snapshot(app))}
    new = [f for f in findings("missing-reference", inject()) if f.fingerprint not in before]
    assert [(f.rule, f.resource.name, f.params["name"]) for f in new] == [(rule, workload, name)]
    assert new[0].params["path"].startswith("spec.template.spec.")


@pytest.mark.parametrize(
    "app", ["online-boutique", "astronomy-shop-otel-demo", "hotel-reservation", "train-ticket"]
)
def test_apps_that_ship_every_reference_are_clean(app: str) -> None:
    assert findings("missing-reference", snapshot(app)) == []


def test_secret_key_dropped_from_a_real_secret() -> None:
    app = "astronomy-shop-otel-demo"
    secret = next(o for o in snapshot(app).of_kind("Secret"))

    def change(body: Body) -> None:
        target = body["spec"]["template"]["spec"]["containers"][0]
        ref = {"secretKeyRef": {"name": secret.name, "key": "no-such-key"}}
        target.setdefault("env", []).append({"name": "INJECTED", "valueFrom": ref})

    found = findings("missing-reference", mutated(app, "Deployment", "frontend", change))
    assert [(f.rule, f.resource.name, f.params["key"]) for f in found] == [
        ("secret-key-missing", "frontend", "no-such-key")
    ]
