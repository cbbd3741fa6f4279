"""Health of an Argo Rollouts ``Rollout`` (argoproj.io/v1alpha1), from its status.

The verdicts and messages are Argo CD's for this kind (its built-in health check,
``resource_customizations/argoproj.io/Rollout``), checked against that check's
own fixtures (tests/health/fixtures/argo-rollout). In order:

1. The controller has not observed the spec (a numeric ``observedGeneration``
   below ``metadata.generation``; older controllers wrote a hash there, which
   counts as observed), or, with a ``workloadRef``, the referenced workload's
   generation: Progressing.
2. Rollouts v1.0+ write ``status.phase`` and ``message``: surfaced as they are
   (``Paused`` is Suspended).
3. Older controllers: an ``InvalidSpec`` condition, or ``Progressing`` with reason
   ``RolloutAborted`` or ``ProgressDeadlineExceeded``: Degraded; pause conditions
   or ``spec.paused``: Suspended; no ``currentPodHash`` yet, replicas still being
   updated or becoming available, a blue-green cutover or canary steps pending:
   Progressing. Otherwise Healthy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus

H = HealthStatus.HEALTHY
S = HealthStatus.SUSPENDED
P = HealthStatus.PROGRESSING
D = HealthStatus.DEGRADED
WORKLOAD_GENERATION = "rollout.argoproj.io/workload-generation"
_DEGRADING_REASONS = ("RolloutAborted", "ProgressDeadlineExceeded")
_PHASES = {s.value: s for s in HealthStatus}


def rollout_health(obj: JSON) -> Health:
    status = f.mapping(obj, "status")
    if not status or not _spec_observed(obj, status) or not _workload_observed(obj, status):
        return Health(P, "Waiting for rollout spec update to be observed")
    phase = status.get("phase")
    if isinstance(phase, str) and phase:
        found = S if phase == "Paused" else _PHASES.get(phase, HealthStatus.UNKNOWN)
        return Health(found, str(status.get("message") or ""))
    return _legacy_health(obj, status)


def _legacy_health(obj: JSON, status: JSON) -> Health:
    degraded = _degraded_condition(status)
    if degraded is not None:
        return Health(D, degraded)
    pauses = status.get("pauseConditions")
    if (isinstance(pauses, list) and pauses) or f.boolean(obj, "spec", "paused"):
        return Health(S, "Rollout is paused")
    if status.get("currentPodHash") is None:
        return Health(P, "Waiting for rollout to finish: status has not been reconciled.")
    return _replicas_progress(obj) or _strategy_progress(obj, status) or Health(H, "")


def _spec_observed(obj: JSON, status: JSON) -> bool:
    observed = _number(status.get("observedGeneration"))
    generation = f.integer(obj, "metadata", "generation")
    # A hash (controllers before v0.10) or a number past the generation: not comparable.
    return observed is None or observed > generation or observed == generation


def _workload_observed(obj: JSON, status: JSON) -> bool:
    annotations = f.annotations_of(obj)
    if f.mapping(obj, "spec").get("workloadRef") is None or not annotations:
        return True
    wanted = _number(annotations.get(WORKLOAD_GENERATION))
    return wanted == _number(status.get("workloadObservedGeneration"))


def _degraded_condition(status: JSON) -> str | None:
    conditions = status.get("conditions")
    for cond in conditions if isinstance(conditions, list) else []:
        if not isinstance(cond, Mapping):
            continue
        kind, reason = cond.get("type"), cond.get("reason")
        if kind == "InvalidSpec" or (kind == "Progressing" and reason in _DEGRADING_REASONS):
            return str(cond.get("message") or "")
    return None


def _replicas_progress(obj: JSON) -> Health | None:
    wanted = f.optional_integer(obj, "spec", "replicas")
    updated = f.integer(obj, "status", "updatedReplicas")
    available = f.integer(obj, "status", "availableReplicas")
    prefix = "Waiting for roll out to finish: "
    if updated < (1 if wanted is None else wanted):
        return Health(P, prefix + "More replicas need to be updated")
    if available < updated:
        return Health(P, prefix + "updated replicas are still becoming available")
    return None


def _strategy_progress(obj: JSON, status: JSON) -> Health | None:
    strategy = f.mapping(obj, "spec", "strategy")
    current = status.get("currentPodHash")
    stable = status.get("stableRS") or f.mapping(status, "canary").get("stableRS") or ""
    if strategy.get("blueGreen") is not None:
        if f.mapping(status, "blueGreen").get("activeSelector") != current:
            return Health(P, "active service cutover pending")
        if stable and stable != current:
            return Health(P, "waiting for analysis to complete")
    elif strategy.get("canary") is not None:
        if f.integer(obj, "status", "replicas") > f.integer(obj, "status", "updatedReplicas"):
            return Health(P, "Waiting for roll out to finish: old replicas are pending termination")
        if stable != current:
            return Health(P, "Waiting for rollout to finish steps")
    return None


def _number(value: Any) -> int | None:
    """A generation as Lua's ``tonumber`` reads it: an int, or a decimal string; else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None
