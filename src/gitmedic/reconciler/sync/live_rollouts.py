"""What an engine that reports no per-object health leaves out: the rollouts still running.

Argo CD lists each managed object's health in the Application, so its watcher knows
which rollouts an applied commit started and has not finished (``progressing``).
A Flux Kustomization without ``wait`` or ``healthChecks`` is Ready as soon as the
apply succeeded: the Deployments it changed may not have rolled out, and the old
pods (of the fault) are still there. Judged then, a correct fix reads as "target
still firing" and is reverted. So for such an engine the live workloads' own
health (gitops-engine's rules: generation observed, replicas updated, old replicas
terminated) fills ``progressing``, and an applied commit with rollouts running is
Progressing, not Deployed; the transaction then waits for the objects its
candidate changed, as it does under Argo CD.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from gitmedic.reconciler.health import HealthStatus, health_of
from gitmedic.reconciler.sync.state import SyncPhase, SyncState

WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Rollout"})


def rolling_out(bodies: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The workloads whose own health is Progressing, as "Kind/namespace/name"."""
    found = []
    for body in bodies:
        if body.get("kind") not in WORKLOAD_KINDS:
            continue
        health = health_of(body)
        if health is None or health.status is not HealthStatus.PROGRESSING:
            continue
        meta = body.get("metadata") or {}
        where = [str(body["kind"]), str(meta.get("namespace") or ""), str(meta.get("name") or "")]
        found.append("/".join(part for part in where if part))
    return tuple(sorted(found))


def with_live_rollouts(state: SyncState, bodies: Iterable[Mapping[str, Any]]) -> SyncState:
    """``state`` with the live rollouts in ``progressing``; Deployed becomes Progressing
    while any runs (the app is not deployed until its workloads rolled out)."""
    if not state.applied:
        return state
    running = rolling_out(bodies)
    if not running:
        return replace(state, progressing=())
    if state.phase is not SyncPhase.DEPLOYED:  # its own verdict and message stand
        return replace(state, progressing=running)
    message = f"applied; rolling out: {', '.join(running[:5])}"
    return replace(state, phase=SyncPhase.PROGRESSING, message=message, progressing=running)
