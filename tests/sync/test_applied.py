"""``applied``: the engine synced exactly SHA, whatever its health (what a revert waits for)."""

from __future__ import annotations

from typing import Any

from gitmedic.reconciler.sync import SyncPhase, assess_application, assess_kustomization
from tests.sync.conftest import OTHER, SHA, deployed_velero, kustomization


def test_a_synced_but_degraded_application_is_applied_not_deployed() -> None:
    app = deployed_velero()
    app["status"]["health"] = {"status": "Degraded", "message": "crash loop"}
    state = assess_application(app, SHA)
    assert state.phase is SyncPhase.PROGRESSING and state.applied


def test_applied_needs_the_exact_revision() -> None:
    assert assess_application(deployed_velero(), SHA).applied
    assert not assess_application(deployed_velero(OTHER), SHA).applied


def test_a_flux_kustomization_applied_at_sha_while_not_ready() -> None:
    obj = kustomization("healthy")
    obj["status"]["lastAppliedRevision"] = f"main@sha1:{SHA}"
    for cond in obj["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"], cond["reason"] = "False", "Progressing"
    state = assess_kustomization(obj, SHA)
    assert state.phase is SyncPhase.PROGRESSING and state.applied
    assert not assess_kustomization(obj, OTHER).applied


def _checking(revision: str, ready: tuple[str, str], healthy: tuple[str, str]) -> dict[str, Any]:
    """A Kustomization as kustomize-controller v1.9.6 writes it while (or after) it runs
    the health checks of ``revision``: lastAppliedRevision still names the old commit,
    since the controller sets it only once the checks pass."""
    obj = kustomization("healthy")
    running = f"Running health checks for revision main@sha1:{revision} with a timeout of 1m0s"
    obj["status"] = {
        "lastAppliedRevision": f"main@sha1:{OTHER}",
        "lastAttemptedRevision": f"main@sha1:{revision}",
        "conditions": [
            {"type": "Ready", "status": ready[0], "reason": ready[1], "message": running},
            {"type": "Healthy", "status": healthy[0], "reason": healthy[1], "message": running},
        ],
    }
    return obj


def test_a_flux_revert_to_an_unhealthy_state_is_applied_while_its_health_checks_run() -> None:
    obj = _checking(SHA, ("Unknown", "Progressing"), ("Unknown", "Progressing"))
    state = assess_kustomization(obj, SHA)
    assert state.phase is SyncPhase.PROGRESSING and state.applied
    assert not assess_kustomization(
        _checking(OTHER, ("Unknown", "Progressing"), ("Unknown", "Progressing")), SHA
    ).applied


def test_a_flux_revert_whose_health_checks_failed_is_applied_but_failed() -> None:
    failed = ("False", "HealthCheckFailed")
    state = assess_kustomization(_checking(SHA, failed, failed), SHA)
    assert state.phase is SyncPhase.FAILED and state.applied
    # a failure of another revision, or one before the apply, says nothing of SHA
    assert not assess_kustomization(_checking(OTHER, failed, failed), SHA).applied
    # the build of SHA failed: nothing of it was applied (the last checks were OTHER's)
    build_failed = _checking(SHA, ("False", "BuildFailed"), ("True", "Succeeded"))
    build_failed["status"]["conditions"][1]["message"] = "Health check passed in 5s"
    assert not assess_kustomization(build_failed, SHA).applied


def test_the_resources_still_progressing_are_named_by_kind_namespace_and_name() -> None:
    app = deployed_velero()
    app["status"]["health"] = {"status": "Progressing"}
    deployment = next(r for r in app["status"]["resources"] if r["kind"] == "Deployment")
    deployment["health"] = {"status": "Progressing", "message": "1 of 2 updated replicas"}
    state = assess_application(app, SHA)
    assert state.applied and state.phase is SyncPhase.PROGRESSING
    assert state.progressing == ("Deployment/test-lla/test-lla",)
    assert assess_application(deployed_velero(), SHA).progressing == ()
