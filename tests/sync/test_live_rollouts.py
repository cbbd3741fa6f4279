"""An engine without per-object health (Flux): the live workloads say what still rolls out."""

from __future__ import annotations

from typing import Any

from gitmedic.reconciler.sync.live_rollouts import rolling_out, with_live_rollouts
from gitmedic.reconciler.sync.state import SyncPhase, SyncState


def deployment(name: str, *, replicas: int, updated: int, available: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "generation": 2},
        "spec": {"replicas": 1},
        "status": {
            "observedGeneration": 2,
            "replicas": replicas,
            "updatedReplicas": updated,
            "availableReplicas": available,
        },
    }


ROLLED_OUT = deployment("cart", replicas=1, updated=1, available=1)
# the fix's pods are up, the fault's pod not yet terminated: what the old test judged too soon
OLD_POD_LEFT = deployment("cart", replicas=2, updated=1, available=1)
READY = SyncState(SyncPhase.DEPLOYED, "Ready", "abc", applied=True)


def test_an_old_replica_pending_termination_is_a_rollout_still_running() -> None:
    assert rolling_out([OLD_POD_LEFT, {"kind": "Service", "metadata": {"name": "cart"}}]) == (
        "Deployment/shop/cart",
    )
    assert rolling_out([ROLLED_OUT]) == ()


def test_ready_with_a_rollout_running_is_progressing_and_names_it() -> None:
    state = with_live_rollouts(READY, [OLD_POD_LEFT])
    assert state.phase is SyncPhase.PROGRESSING
    assert state.applied and state.progressing == ("Deployment/shop/cart",)
    assert "Deployment/shop/cart" in state.message


def test_ready_with_every_rollout_done_stays_deployed() -> None:
    assert with_live_rollouts(READY, [ROLLED_OUT]) == READY


def test_a_commit_not_applied_is_left_as_the_engine_said() -> None:
    waiting = SyncState(SyncPhase.PROGRESSING, "Reconciling", applied=False)
    assert with_live_rollouts(waiting, [OLD_POD_LEFT]) == waiting


def test_a_failed_apply_stays_failed_with_the_rollouts_named() -> None:
    failed = SyncState(SyncPhase.FAILED, "HealthCheckFailed", applied=True)
    state = with_live_rollouts(failed, [OLD_POD_LEFT])
    assert state.phase is SyncPhase.FAILED and state.message == "HealthCheckFailed"
    assert state.progressing == ("Deployment/shop/cart",)
