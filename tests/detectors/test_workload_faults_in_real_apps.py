"""Workload-spec faults injected into the real apps: each detector fires on exactly the
object that was broken, and is silent on the unmodified app.

Every fault goes into two different apps, with objects and values that the YAML
cases do not use. Node-dependent detectors get a realistic three-node cluster
(Node objects, as a live snapshot or a committed ``kubectl get nodes`` has them).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import pytest

from gitmedic.detectors import Finding, Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import App, real_apps

REGISTRY = builtin_registry()
OURS = (
    "anti-affinity-deadlock",
    "container-port-conflict",
    "dns-policy-none",
    "host-port-conflict",
    "liveness-probe-aggressive",
    "node-selector-unmatched",
    "request-too-large",
    "rollout-strategy-unsafe",
    "rwo-pvc-shared",
)
Edit = Callable[[dict[str, Any]], None]


@cache
def app_snapshot(name: str) -> Snapshot:
    app = next(a for a in real_apps() if a.name == name)
    state = load_desired(app.path, namespace=app.namespace)
    assert not state.errors
    return state.snapshot


def nodes(count: int = 3, *, zones: int = 1, cpu: str = "4", memory: str = "16Gi") -> list[Obj]:
    out = []
    for i in range(count):
        name = f"worker-{i}"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "beta.kubernetes.io/os": "linux",
            "topology.kubernetes.io/zone": f"zone-{i % zones}",
        }
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        }
        out.append(Obj(Resource("Node", "", name), body))
    return out


def mutated(app: str, edits: dict[tuple[str, str], Edit], extra: Iterable[Obj] = ()) -> Snapshot:
    """The app with some objects edited (on deep copies) and extra objects added."""
    base = app_snapshot(app)
    objs = []
    for obj in base:
        edit = edits.get((obj.kind, obj.name))
        if edit is not None:
            body = copy.deepcopy(dict(obj.body))
            edit(body)
            obj = Obj(obj.ref, body, obj.source)
        objs.append(obj)
    assert len(objs) == len(base) and all(
        (k, n) in {(o.kind, o.name) for o in base} for k, n in edits
    )
    return Snapshot([*objs, *extra], mode=base.mode)


def found(snapshot: Snapshot, detector: str) -> list[Finding]:
    result = run_detectors([REGISTRY.get(detector)], snapshot)
    assert not result.errors
    return list(result.findings)


def where(findings: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.rule, f.resource.kind, f.resource.name) for f in findings]


def pod_spec(body: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = body["spec"]["template"]["spec"]
    return spec


def container(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod_spec(body)["containers"] if c["name"] == name)


# -- silence on the unmodified apps ------------------------------------------------------


@pytest.mark.parametrize("detector", OURS)
def test_silent_on_every_unmodified_app_with_and_without_nodes(
    real_app: App, detector: str
) -> None:
    plain = app_snapshot(real_app.name)
    with_nodes = Snapshot([*plain, *nodes()], mode=plain.mode)
    assert found(plain, detector) == []
    assert found(with_nodes, detector) == []


# -- rollout-strategy-unsafe -------------------------------------------------------------


def _strategy(unavailable: object, surge: object) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        body["spec"]["strategy"] = {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge},
        }

    return edit


def test_rollout_strategy_in_hotel_reservation() -> None:
    snap = mutated("hotel-reservation", {("Deployment", "search"): _strategy(1, 0)})
    (f,) = found(snap, "rollout-strategy-unsafe")
    assert where([f]) == [("all-pods-unavailable", "Deployment", "search")]
    assert f.severity.value == "critical"
    assert f.params["path"] == "spec.strategy.rollingUpdate.maxUnavailable"
    assert f.params["value"] == 1


def test_rollout_strategy_in_online_boutique() -> None:
    def scaled(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = 4
        _strategy("100%", "50%")(body)

    snap = mutated("online-boutique", {("Deployment", "cartservice"): scaled})
    (f,) = found(snap, "rollout-strategy-unsafe")
    assert where([f]) == [("all-pods-unavailable", "Deployment", "cartservice")]
    assert f.severity.value == "warning"
    assert (f.params["value"], f.params["replicas"]) == ("100%", 4)


# -- dns-policy-none ---------------------------------------------------------------------


def test_dns_policy_none_in_online_boutique() -> None:
    def edit(body: dict[str, Any]) -> None:
        pod_spec(body)["dnsPolicy"] = "None"
        pod_spec(body)["dnsConfig"] = {"nameservers": ["1.1.1.1"]}

    (f,) = found(mutated("online-boutique", {("Deployment", "frontend"): edit}), "dns-policy-none")
    assert where([f]) == [("nameservers-external", "Deployment", "frontend")]
    assert f.severity.value == "critical"  # frontend calls productcatalogservice etc.
    assert f.params["path"] == "spec.template.spec.dnsPolicy"
    assert f.params["nameservers"] == ["1.1.1.1"]


def test_dns_policy_none_in_sock_shop() -> None:
    def edit(body: dict[str, Any]) -> None:
        pod_spec(body)["dnsPolicy"] = "None"

    (f,) = found(mutated("sock-shop", {("Deployment", "orders"): edit}), "dns-policy-none")
    assert where([f]) == [("dns-config-missing", "Deployment", "orders")]


# -- liveness-probe-aggressive -----------------------------------------------------------


def test_liveness_aggressive_in_sock_shop() -> None:
    def edit(body: dict[str, Any]) -> None:
        probe = container(body, "catalogue")["livenessProbe"]
        probe.update(periodSeconds=1, failureThreshold=2)

    snap = mutated("sock-shop", {("Deployment", "catalogue"): edit})
    (f,) = found(snap, "liveness-probe-aggressive")
    assert where([f]) == [("kill-window-short", "Deployment", "catalogue")]
    assert f.severity.value == "warning"  # initialDelaySeconds 300 covers start-up
    assert f.params["container"] == "catalogue"
    assert f.params["path"] == "spec.template.spec.containers[0].livenessProbe"


def test_liveness_aggressive_in_online_boutique() -> None:
    def edit(body: dict[str, Any]) -> None:
        probe = container(body, "server")["livenessProbe"]
        probe.update(initialDelaySeconds=0, periodSeconds=2, failureThreshold=1)

    snap = mutated("online-boutique", {("Deployment", "productcatalogservice"): edit})
    (f,) = found(snap, "liveness-probe-aggressive")
    assert where([f]) == [("kill-window-short", "Deployment", "productcatalogservice")]
    assert f.severity.value == "critical"
    assert f.params["value"]["periodSeconds"] == 2


# -- container-port-conflict -------------------------------------------------------------


def test_sidecar_port_conflict_in_sock_shop() -> None:
    def edit(body: dict[str, Any]) -> None:
        container(body, "rabbitmq-exporter")["ports"][0]["containerPort"] = 5672

    snap = mutated("sock-shop", {("Deployment", "rabbitmq"): edit})
    (f,) = found(snap, "container-port-conflict")
    assert where([f]) == [("same-port", "Deployment", "rabbitmq")]
    assert (f.params["container"], f.params["other_container"]) == ("rabbitmq-exporter", "rabbitmq")
    assert f.params["path"] == "spec.template.spec.containers[1].ports[0].containerPort"


def test_sidecar_port_conflict_in_otel_demo() -> None:
    def edit(body: dict[str, Any]) -> None:
        container(body, "flagd-ui")["ports"][0]["containerPort"] = 8016

    snap = mutated("astronomy-shop-otel-demo", {("Deployment", "flagd"): edit})
    (f,) = found(snap, "container-port-conflict")
    assert where([f]) == [("same-port", "Deployment", "flagd")]
    assert (f.params["container"], f.params["port"]) == ("flagd-ui", 8016)


# -- host-port-conflict ------------------------------------------------------------------


def _host_port(name: str, port: int) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        container(body, name)["ports"][0]["hostPort"] = port

    return edit


def test_host_port_shared_in_teastore() -> None:
    edits = {
        ("Deployment", "teastore-webui"): _host_port("teastore-webui", 8080),
        ("Deployment", "teastore-auth"): _host_port("teastore-auth", 8080),
    }
    findings = found(mutated("teastore", edits), "host-port-conflict")
    assert where(findings) == [
        ("host-port-shared", "Deployment", "teastore-auth"),
        ("host-port-shared", "Deployment", "teastore-webui"),
    ]
    assert findings[0].related[0].name == "teastore-webui"


def test_host_port_replicas_in_hotel_reservation() -> None:
    def edit(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = 4
        _host_port("hotel-reserv-frontend", 5000)(body)

    snap = mutated("hotel-reservation", {("Deployment", "frontend"): edit}, nodes(3))
    (f,) = found(snap, "host-port-conflict")
    assert where([f]) == [("host-port-replicas", "Deployment", "frontend")]
    assert (f.params["replicas"], f.params["nodes"]) == (4, 3)


# -- rwo-pvc-shared ----------------------------------------------------------------------


def test_rwo_claim_with_replicas_in_hotel_reservation_sregym() -> None:
    def edit(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = 2
        term = {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": body["spec"]["template"]["metadata"]["labels"]},
        }
        pod_spec(body)["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }

    snap = mutated("hotel-reservation-sregym", {("Deployment", "mongodb-profile"): edit})
    (f,) = found(snap, "rwo-pvc-shared")
    assert where([f]) == [("replicas-share-claim", "Deployment", "mongodb-profile")]
    assert f.severity.value == "critical"
    assert (f.params["claim"], f.params["value"]) == ("profile-pvc", 2)


def test_rwo_claim_of_two_workloads_in_hotel_reservation() -> None:
    def edit(body: dict[str, Any]) -> None:
        volume = {"name": "stolen", "persistentVolumeClaim": {"claimName": "user-pvc"}}
        pod_spec(body).setdefault("volumes", []).append(volume)

    snap = mutated("hotel-reservation", {("Deployment", "user"): edit})
    findings = found(snap, "rwo-pvc-shared")
    assert where(findings) == [
        ("claim-shared-by-workloads", "Deployment", "mongodb-user"),
        ("claim-shared-by-workloads", "Deployment", "user"),
    ]
    assert findings[1].params["path"].startswith("spec.template.spec.volumes[")


# -- anti-affinity-deadlock --------------------------------------------------------------


def _anti_affinity(replicas: int, key: str) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        body["spec"]["replicas"] = replicas
        labels = body["spec"]["template"]["metadata"]["labels"]
        term = {"topologyKey": key, "labelSelector": {"matchLabels": dict(labels)}}
        pod_spec(body)["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }

    return edit


def test_anti_affinity_deadlock_in_online_boutique() -> None:
    edit = _anti_affinity(4, "kubernetes.io/hostname")
    snap = mutated("online-boutique", {("Deployment", "checkoutservice"): edit}, nodes(3))
    (f,) = found(snap, "anti-affinity-deadlock")
    assert where([f]) == [("replicas-exceed-domains", "Deployment", "checkoutservice")]
    assert (f.params["value"], f.params["domains"]) == (4, 3)
    # Without Node objects the node count is unknown: silent.
    unknown = mutated("online-boutique", {("Deployment", "checkoutservice"): edit})
    assert found(unknown, "anti-affinity-deadlock") == []


def test_anti_affinity_deadlock_in_train_ticket() -> None:
    edit = _anti_affinity(3, "topology.kubernetes.io/zone")
    snap = mutated("train-ticket", {("Deployment", "ts-order-service"): edit}, nodes(4, zones=2))
    (f,) = found(snap, "anti-affinity-deadlock")
    assert where([f]) == [("replicas-exceed-domains", "Deployment", "ts-order-service")]
    assert f.params["topology_key"] == "topology.kubernetes.io/zone"


# -- node-selector-unmatched -------------------------------------------------------------


def test_node_selector_unmatched_in_hotel_reservation() -> None:
    def edit(body: dict[str, Any]) -> None:
        pod_spec(body)["nodeSelector"] = {"kubernetes.io/hostname": "node-9"}

    snap = mutated("hotel-reservation", {("Deployment", "geo"): edit}, nodes(3))
    (f,) = found(snap, "node-selector-unmatched")
    assert where([f]) == [("node-selector", "Deployment", "geo")]
    assert f.params["path"] == 'spec.template.spec.nodeSelector["kubernetes.io/hostname"]'
    assert f.params["value"] == "node-9"
    assert f.params["node_values"] == {
        "kubernetes.io/hostname": ["worker-0", "worker-1", "worker-2"]
    }


def test_node_selector_unmatched_in_sock_shop() -> None:
    def edit(body: dict[str, Any]) -> None:
        pod_spec(body)["nodeSelector"]["beta.kubernetes.io/os"] = "windows"

    snap = mutated("sock-shop", {("Deployment", "carts-db"): edit}, nodes(2))
    (f,) = found(snap, "node-selector-unmatched")
    assert where([f]) == [("node-selector", "Deployment", "carts-db")]
    assert f.params["unmatched"] == {"beta.kubernetes.io/os": "windows"}


# -- request-too-large -------------------------------------------------------------------


def _request(name: str, resource: str, value: str) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        resources = container(body, name).setdefault("resources", {})
        resources.setdefault("requests", {})[resource] = value

    return edit


def test_request_too_large_in_train_ticket() -> None:
    edit = _request("ts-order-service", "memory", "40Gi")
    snap = mutated("train-ticket", {("Deployment", "ts-order-service"): edit}, nodes(3))
    (f,) = found(snap, "request-too-large")
    assert where([f]) == [("container-request", "Deployment", "ts-order-service")]
    assert f.params["path"] == "spec.template.spec.containers[0].resources.requests.memory"
    assert (f.params["value"], f.params["largest_allocatable"]) == ("40Gi", "16Gi")


def test_request_too_large_in_online_boutique() -> None:
    edit = _request("server", "cpu", "8")
    snap = mutated("online-boutique", {("Deployment", "adservice"): edit}, nodes(3))
    (f,) = found(snap, "request-too-large")
    assert where([f]) == [("container-request", "Deployment", "adservice")]
    assert f.params["resource"] == "cpu"
