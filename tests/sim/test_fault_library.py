"""Every A-class fault of the library on real apps healthy at baseline.

For each (fault, app) where the fault applies: the app is healthy before, shows
the fault's symptom after, and every ``detector/rule`` expected for it appears
among the live findings that are new since the baseline (a finding the app
already had does not count). A fault with a baseline extension (the object it
breaks, added where the app lacks it) is preceded by that commit, which must
bring no finding; the sim deploys it as the baseline, which must be healthy.
Every fault applies to at least three of the healthy apps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import MANIFEST_FAULTS, NOT_MODELLED, FaultNotApplicable, ManifestFault
from gitmedic.sim.faults.git import init_repo
from gitmedic.sim.runtime import SimState
from tests.sim.faultcase import Outcome, copy_app, run_fault

APPS = ("online-boutique", "sock-shop", "astronomy-shop-otel-demo", "hotel-reservation")


@pytest.mark.integration  # a git repo and a 20-minute simulated run per case
@pytest.mark.parametrize("app_name", APPS)
@pytest.mark.parametrize("fault_id", sorted(MANIFEST_FAULTS))
def test_fault_shows_its_symptom_and_is_detected(
    fault_id: str, app_name: str, tmp_path: Path
) -> None:
    fault = MANIFEST_FAULTS[fault_id]
    try:
        outcome = run_fault(fault, app_name, tmp_path)
    except FaultNotApplicable as exc:
        pytest.skip(f"{fault_id} does not apply to {app_name}: {exc}")

    if outcome.extension is not None:  # the benign commit that gave the app the object
        assert not outcome.extension_fired, sorted(outcome.extension_fired)
    assert _healthy(outcome.before), f"{fault_id} on {app_name}: unhealthy baseline"
    assert shows(fault.symptom, outcome), f"{fault_id} on {app_name}: no {fault.symptom}"
    for expected in fault.detectors:
        assert expected in outcome.fired, (
            f"{expected} did not fire on {fault_id} ({app_name}); new: {sorted(outcome.fired)}"
        )


@pytest.mark.integration  # copies, git repos and loads of four real apps per fault
@pytest.mark.parametrize("fault_id", sorted(MANIFEST_FAULTS))
def test_every_fault_applies_to_at_least_three_healthy_apps(fault_id: str, tmp_path: Path) -> None:
    fault = MANIFEST_FAULTS[fault_id]
    applies = [a for a in APPS if _applies(fault, a, tmp_path)]

    assert len(applies) >= 3, f"{fault_id} applies to {applies} only"


def _applies(fault: ManifestFault, app_name: str, tmp: Path) -> bool:
    root, path, namespace = copy_app(app_name, tmp)
    init_repo(root)  # source files are named relative to the repo root
    snapshot = load_desired(path, namespace=namespace).snapshot
    try:
        if fault.baseline is not None and fault.baseline(root, snapshot) is not None:
            snapshot = load_desired(path, namespace=namespace).snapshot
        fault.inject(root, snapshot)
    except FaultNotApplicable:
        return False
    return True


def test_every_expected_detector_is_a_real_one() -> None:
    known = {d.id for d in builtin_registry()}
    expected = {e.partition("/")[0] for f in MANIFEST_FAULTS.values() for e in f.detectors}

    assert expected <= known, sorted(expected - known)
    assert all("/" in e for f in MANIFEST_FAULTS.values() for e in f.detectors)


def test_every_catalogue_fault_is_in_the_library_or_explained() -> None:
    catalogue = {
        "service-target-port",
        "service-selector-mismatch",
        "service-selector-polluted",
        "missing-service",
        "scaled-to-zero",
        "nonexistent-node",
        "bad-image",
        "wrong-command",
        "env-wrong-port",
        "env-missing",
        "env-shadowed",
        "liveness-probe-wrong",
        "liveness-probe-aggressive",
        "readiness-probe-wrong",
        "memory-limit-too-small",
        "request-too-large",
        "cpu-limit-too-tight",
        "missing-configmap",
        "configmap-key-dropped",
        "pvc-claim-broken",
        "rwo-pvc-shared",
        "anti-affinity-deadlock",
        "sidecar-port-conflict",
        "host-port-conflict",
        "init-container-hang",
        "rollout-strategy-unsafe",
        "dns-policy-none",
        "network-policy-deny-all",
        "internal-traffic-policy-local",
        "ingress-misroute",
        "resource-quota-blocks",
        "hpa-no-cpu-request",
        "feature-flag",
    }
    assert catalogue == set(MANIFEST_FAULTS) | set(NOT_MODELLED)


def _healthy(state: SimState) -> bool:
    return all(p.ready for p in state.observed.pods) and all(
        r.success_rate == 1.0 for r in state.traffic.services.values()
    )


def shows(symptom: str, outcome: Outcome) -> bool:
    after = outcome.after
    kind, _, detail = symptom.partition(":")
    pods = [p.body for p in after.observed.pods]
    events = [o for o in after.observed.objects if o["kind"] == "Event"]
    checks = {
        "waiting": lambda: any(detail in _waiting(p) for p in pods),
        "pending": lambda: any(
            e["reason"] == "FailedScheduling" and detail in e["message"] for e in events
        ),
        "init-stuck": lambda: any(
            p["status"].get("initContainerStatuses") and p["status"]["phase"] == "Pending"
            for p in pods
        ),
        "not-ready": lambda: any(p["status"]["phase"] == "Running" and not _ready(p) for p in pods),
        "failed-create": lambda: any(e["reason"] == "FailedCreate" for e in events),
        "no-endpoints": lambda: _endpoints_empty(after, outcome.injection.target.name),
        "traffic": lambda: any(r.success_rate < 1.0 for r in after.traffic.services.values()),
        "latency": lambda: _slower(outcome),
        "hpa-inactive": lambda: any(
            o["kind"] == "HorizontalPodAutoscaler"
            and any(
                c["type"] == "ScalingActive" and c["status"] == "False"
                for c in o["status"]["conditions"]
            )
            for o in after.observed.objects
        ),
        "rollout-outage": lambda: (
            any(r.success_rate < 1.0 for r in after.traffic.entrypoints.values())
            or _endpoints_empty(after, outcome.injection.target.name)
        ),
    }
    return checks[kind]()


def _waiting(pod: dict[str, object]) -> set[str]:
    status = pod["status"]
    assert isinstance(status, dict)
    statuses = status.get("containerStatuses", []) + status.get("initContainerStatuses", [])
    return {str(cs.get("state", {}).get("waiting", {}).get("reason")) for cs in statuses}


def _ready(pod: dict[str, object]) -> bool:
    status = pod["status"]
    assert isinstance(status, dict)
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))


def _endpoints_empty(state: SimState, name: str) -> bool:
    for o in state.observed.objects:
        if o["kind"] == "Endpoints" and o["metadata"]["name"] == name:
            return not any(s.get("addresses") for s in o.get("subsets", []))
    # a Deployment target: the Services in front of it
    return any(
        o["kind"] == "Endpoints" and not any(s.get("addresses") for s in o.get("subsets", []))
        for o in state.observed.objects
    )


def _slower(outcome: Outcome) -> bool:
    before = outcome.before.traffic.services
    after = outcome.after.traffic.services
    return any(after[k].latency_ms > before[k].latency_ms * 2 for k in before if k in after)
