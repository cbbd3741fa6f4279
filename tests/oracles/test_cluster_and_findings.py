"""The cluster-state oracle over a snapshot built from real gitops-engine pod
dumps, and the detector oracle over a real app with a fault injected."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import yaml

from gitmedic.detectors import Detector, Finding, Mode, Obj, Resource, Snapshot
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.oracles import CapacityLoss, ClusterStateOracle, DetectorOracle
from gitmedic.reconciler.transaction import VerdictPhase
from tests.conftest import APPS, DATA
from tests.support.stepping import window

TESTDATA = DATA / "gitops-engine-health" / "testdata"
NS = "shop"


def _obj(body: dict[str, Any]) -> Obj:
    meta = body["metadata"]
    return Obj(Resource(body["kind"], meta["namespace"], meta["name"], body["apiVersion"]), body)


def _pod(fixture: str, name: str, owner: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((TESTDATA / f"{fixture}.yaml").read_text())
    body["metadata"].update(name=name, namespace=NS)
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}
    ]
    return body


def _deployment(name: str, replicas: int, ready: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS, "generation": 1},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}}}},
        "status": {
            "observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
            "availableReplicas": ready, "readyReplicas": ready,
        },
    }  # fmt: skip


def shop(crashing: int) -> Snapshot:
    """web: 4 replicas, ``crashing`` of them in CrashLoopBackOff; cart: 1 healthy replica."""
    objs = [_deployment("web", 4, 4 - crashing), _deployment("cart", 1, 1)]
    for i in range(4):
        fixture = "pod-crashloop" if i < crashing else "pod-running-restart-always"
        objs.append(_pod(fixture, f"web-6d4cf56db6-{i}", "web-6d4cf56db6"))
    objs.append(_pod("pod-running-restart-always", "cart-7b9f8c-0", "cart-7b9f8c"))
    return Snapshot([_obj(copy.deepcopy(o)) for o in objs], mode=Mode.LIVE)


def test_a_healthy_namespace_passes() -> None:
    oracle = ClusterStateOracle(lambda: shop(0), NS)
    reading = oracle.measure()
    assert reading.result["worst"] == "Healthy" and reading.result["degraded"] == 0
    assert reading.observation.capacity == ()
    assert window([oracle], FakeClock()).verdict.phase is VerdictPhase.SUCCESSFUL


def test_crashing_pods_fail_it_and_remove_capacity_by_fraction() -> None:
    reading = ClusterStateOracle(lambda: shop(1), NS).measure()
    assert reading.result["degraded"] == 1 + 0  # the pod; the Deployment itself is Progressing
    assert reading.result["worst"] == "Degraded"
    web = Resource("Deployment", NS, "web", "apps/v1")
    assert reading.observation.capacity == (CapacityLoss(web, 4, 1),)
    assert reading.result["capacity_lost"] == 0.25
    verdict = window([ClusterStateOracle(lambda: shop(3), NS)], FakeClock()).verdict
    assert verdict.phase is VerdictPhase.FAILED and verdict.mu == 7.5


def test_missing_pods_count_as_lost_capacity() -> None:
    snap = shop(0)
    without_pods = Snapshot([o for o in snap if o.kind != "Pod"], mode=Mode.LIVE)
    reading = ClusterStateOracle(lambda: without_pods, NS).measure()
    assert reading.result["capacity_lost"] == 2.0  # web and cart entirely


def test_other_namespaces_are_ignored() -> None:
    reading = ClusterStateOracle(lambda: shop(2), "elsewhere").measure()
    assert reading.result == {
        "worst": "Healthy", "degraded": 0, "progressing": 0, "unhealthy": [], "capacity_lost": 0,
    }  # fmt: skip


def test_a_snapshot_that_fails_is_an_error_measurement() -> None:
    def broken() -> Snapshot:
        raise ConnectionError("apiserver unreachable")

    result = window([ClusterStateOracle(broken, NS)], FakeClock())
    assert result.verdict.phase is VerdictPhase.ERROR
    assert "apiserver unreachable" in result.measurements[0].marks[0].message


def _boutique(broken: bool) -> Snapshot:
    state = load_desired(APPS / "online-boutique" / "release" / "kubernetes-manifests.yaml")
    objs = list(state.snapshot)
    if broken:
        svc = next(o for o in objs if o.kind == "Service" and o.name == "cartservice")
        body = copy.deepcopy(dict(svc.body))
        body["spec"]["selector"] = {"app": "cartservice-typo"}
        objs = [Obj(svc.ref, body) if o is svc else o for o in objs]
    return Snapshot(objs, mode=Mode.DESIRED)


def test_detector_oracle_fails_on_critical_findings_only() -> None:
    registry = list(builtin_registry())
    clean = window([DetectorOracle(lambda: _boutique(False), registry)], FakeClock()).verdict
    assert clean.phase is VerdictPhase.SUCCESSFUL and clean.mu == 0
    oracle = DetectorOracle(lambda: _boutique(True), registry)
    reading = oracle.measure()
    assert reading.result["critical"] == 1 and reading.result["errors"] == []
    assert "cartservice" in reading.observation.notes[0]
    verdict = window([oracle], FakeClock()).verdict
    assert verdict.phase is VerdictPhase.FAILED and verdict.mu == 5.0


def test_a_detector_that_fails_makes_the_detector_oracle_an_error_not_a_pass() -> None:
    def broken(snapshot: Snapshot) -> Iterator[Finding]:
        raise KeyError("spec")

    spec = builtin_registry().get("service-selector-unmatched").spec
    oracle = DetectorOracle(lambda: _boutique(False), [Detector(spec, broken)])
    result = window([oracle], FakeClock())
    assert result.verdict.phase is VerdictPhase.ERROR
    message = result.measurements[0].marks[0].message
    assert "service-selector-unmatched failed: KeyError" in message
