"""``applied``: the engine synced exactly SHA, whatever its health (what a revert waits for)."""

from __future__ import annotations

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
