"""The HPA and resource detectors on the eight real apps: each fault injected into two
apps fires on the right object, and the unmodified apps stay silent."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from gitmedic.detectors import Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import App, real_apps

DETECTORS = ("hpa-target-missing", "hpa-no-cpu-request", "memory-limit-below-request",
             "memory-limit-too-small", "resource-quota-blocks")  # fmt: skip
REGISTRY = builtin_registry()
APPS = {a.name: a for a in real_apps()}
Mutation = Callable[[dict[str, Any]], None]


@cache
def _desired(name: str) -> Snapshot:
    app = APPS[name]
    return load_desired(app.path, namespace=app.namespace).snapshot


def injected(
    app: str,
    changes: dict[tuple[str, str], Mutation] | None = None,
    add: tuple[dict[str, Any], ...] = (),
) -> Snapshot:
    """The app's desired state with bodies changed (copies) and objects added."""
    base = _desired(app)
    namespace = APPS[app].namespace
    objects = []
    for obj in base:
        mutate = (changes or {}).get((obj.kind, obj.name))
        if mutate is None:
            objects.append(obj)
            continue
        body = copy.deepcopy(dict(obj.body))
        mutate(body)
        objects.append(Obj(obj.ref, body, obj.source))
    for body in add:
        ref = Resource(body["kind"], namespace, body["metadata"]["name"], body["apiVersion"])
        objects.append(Obj(ref, {**body, "metadata": {**body["metadata"], "namespace": namespace}}))
    return Snapshot(objects, mode=base.mode)


def found(detector: str, snapshot: Snapshot) -> list[tuple[str, str]]:
    result = run_detectors([REGISTRY.get(detector)], snapshot)
    assert not result.errors
    return [(f.resource.kind, f.resource.name) for f in result.findings]


def hpa(name: str, target: str, *, cpu: bool = True) -> dict[str, Any]:
    metric = {"type": "Resource", "resource": {"name": "cpu" if cpu else "memory",
              "target": {"type": "Utilization", "averageUtilization": 70}}}  # fmt: skip
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name},
            "spec": {"scaleTargetRef": ref, "minReplicas": 1, "maxReplicas": 4,
                     "metrics": [metric]}}  # fmt: skip


def quota(hard: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
            "spec": {"hard": hard}}  # fmt: skip


def container(body: dict[str, Any], index: int = 0) -> dict[str, Any]:
    c: dict[str, Any] = body["spec"]["template"]["spec"]["containers"][index]
    return c


def set_limit(resource: str, value: str) -> Mutation:
    def mutate(body: dict[str, Any]) -> None:
        container(body).setdefault("resources", {}).setdefault("limits", {})[resource] = value

    return mutate


def drop_cpu(body: dict[str, Any]) -> None:
    for section in container(body).get("resources", {}).values():
        section.pop("cpu", None)


@pytest.mark.parametrize("app", real_apps(), ids=lambda a: a.name)
def test_unmodified_real_apps_are_silent(app: App) -> None:
    for detector in DETECTORS:
        assert found(detector, _desired(app.name)) == [], detector


@pytest.mark.parametrize(
    ("app", "target", "typo"),
    [("online-boutique", "frontend", "frontend-v2"), ("hotel-reservation", "geo", "geo-svc")],
)
def test_hpa_target_missing(app: str, target: str, typo: str) -> None:
    assert found("hpa-target-missing", injected(app, add=(hpa("scale", typo),))) == [
        ("HorizontalPodAutoscaler", "scale")
    ]
    assert found("hpa-target-missing", injected(app, add=(hpa("scale", target),))) == []


@pytest.mark.parametrize(
    ("app", "target"), [("online-boutique", "cartservice"), ("sock-shop", "carts")]
)
def test_hpa_no_cpu_request(app: str, target: str) -> None:
    fault = injected(app, {("Deployment", target): drop_cpu}, add=(hpa("scale", target),))
    assert found("hpa-no-cpu-request", fault) == [("Deployment", target)]
    assert found("hpa-no-cpu-request", injected(app, add=(hpa("scale", target),))) == []
    memory_only = injected(app, {("Deployment", target): drop_cpu}, (hpa("s", target, cpu=False),))
    assert found("hpa-no-cpu-request", memory_only) == []


@pytest.mark.parametrize(
    ("app", "target", "resource", "limit"),
    [("online-boutique", "cartservice", "memory", "32Mi"),
     ("sock-shop", "orders", "memory", "100Mi"),
     ("train-ticket", "ts-user-mongo", "cpu", "10m")],
)  # fmt: skip
def test_limit_below_request(app: str, target: str, resource: str, limit: str) -> None:
    fault = injected(app, {("Deployment", target): set_limit(resource, limit)})
    result = run_detectors([REGISTRY.get("memory-limit-below-request")], fault)
    assert [(f.resource.name, f.rule) for f in result.findings] == [
        (target, f"{resource}-limit-below-request")
    ]
    assert result.findings[0].params["limit"] == limit


@pytest.mark.parametrize(
    ("app", "target"), [("online-boutique", "frontend"), ("sock-shop", "catalogue"),
                        ("astronomy-shop-otel-demo", "checkout")],
)  # fmt: skip
def test_memory_limit_too_small(app: str, target: str) -> None:
    fault = injected(app, {("Deployment", target): set_limit("memory", "10Mi")})
    assert found("memory-limit-too-small", fault) == [("Deployment", target)]


def test_resource_quota_blocks_every_workload_without_memory_requests() -> None:
    fault = injected("hotel-reservation", add=(quota({"requests.memory": "8Gi"}),))
    workloads = sorted((w.ref.kind, w.ref.name) for w in _desired("hotel-reservation").workloads())
    assert found("resource-quota-blocks", fault) == workloads
    # Their CPU requests are all set: a CPU quota refuses nothing.
    assert (
        found(
            "resource-quota-blocks",
            injected("hotel-reservation", add=(quota({"requests.cpu": "8"}),)),
        )
        == []
    )


def test_resource_quota_blocks_train_ticket_on_memory_limits() -> None:
    def with_limit(body: dict[str, Any]) -> None:
        container(body)["resources"]["limits"] = {"memory": "200Mi"}

    fault = injected("train-ticket", {("Deployment", "ts-user-mongo"): with_limit},
                     add=(quota({"limits.memory": "64Gi"}),))  # fmt: skip
    names = [name for _, name in found("resource-quota-blocks", fault)]
    assert "ts-auth-mongo" in names and "ts-user-mongo" not in names
