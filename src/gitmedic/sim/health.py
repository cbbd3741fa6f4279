"""Health of observed objects, for the sim's Application and its summary.

The project's health functions (gitops-engine's rules, one per kind) live in
``gitmedic.reconciler.health``; when that package is present the sim uses its
``health_of(body)``, so the sim and the reconciler judge alike. Until then (and
as a fallback) this module holds **the sim's own minimal view**: the same
ordered statuses and the handful of rules the sim's own objects need. Only the
status names cross this boundary, so swapping one for the other changes nothing
for callers.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

_ERROR_REASONS = frozenset(
    {
        "CrashLoopBackOff",
        "ImagePullBackOff",
        "ErrImagePull",
        "CreateContainerConfigError",
        "InvalidImageName",
        "CreateContainerError",
        "RunContainerError",
    }
)


class Status(enum.Enum):
    """Closed and ordered, worst last (gitops-engine's order)."""

    HEALTHY = "Healthy"
    SUSPENDED = "Suspended"
    PROGRESSING = "Progressing"
    MISSING = "Missing"
    DEGRADED = "Degraded"
    UNKNOWN = "Unknown"


_ORDER = {s: i for i, s in enumerate(Status)}


def worst(statuses: Iterable[Status]) -> Status:
    return max(statuses, key=_ORDER.__getitem__, default=Status.HEALTHY)


@cache
def _shared() -> Callable[[Mapping[str, Any]], Any] | None:
    try:
        module = importlib.import_module("gitmedic.reconciler.health")
    except ImportError:
        return None
    fn = getattr(module, "health_of", None)
    return fn if callable(fn) else None


def health_of(body: Mapping[str, Any]) -> tuple[Status, str]:
    shared = _shared()
    if shared is not None:
        result = shared(body)
        status = getattr(result, "status", result)
        name = str(getattr(status, "value", status))
        try:
            return Status(name.capitalize() if name.islower() else name), str(
                getattr(result, "message", "")
            )
        except ValueError:
            return Status.UNKNOWN, f"unknown health {name!r}"
    return own_health(body)


def own_health(body: Mapping[str, Any]) -> tuple[Status, str]:
    """The sim's own view, used while the shared health functions are absent."""
    rule = _RULES.get(str(body.get("kind", "")))
    return rule(body) if rule else (Status.HEALTHY, "")


def _deployment(body: Mapping[str, Any]) -> tuple[Status, str]:
    spec, status = body.get("spec") or {}, body.get("status") or {}
    if spec.get("paused"):
        return Status.SUSPENDED, "Deployment is paused"
    if (body.get("metadata") or {}).get("generation", 0) > status.get("observedGeneration", 0):
        return Status.PROGRESSING, "Waiting for rollout to finish: observed generation is old"
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            return (
                Status.DEGRADED,
                f'Deployment "{body["metadata"]["name"]}" exceeded its progress deadline',
            )
    want = spec.get("replicas", 1)
    updated, total = status.get("updatedReplicas", 0), status.get("replicas", 0)
    if updated < want:
        return Status.PROGRESSING, f"{updated} out of {want} new replicas have been updated"
    if total > updated:
        return Status.PROGRESSING, f"{total - updated} old replicas are pending termination"
    if status.get("availableReplicas", 0) < updated:
        return (
            Status.PROGRESSING,
            f"{status.get('availableReplicas', 0)} of {updated} updated replicas are available",
        )
    return Status.HEALTHY, ""


def _statefulset(body: Mapping[str, Any]) -> tuple[Status, str]:
    want = (body.get("spec") or {}).get("replicas", 1)
    ready = (body.get("status") or {}).get("readyReplicas", 0)
    if ready < want:
        return Status.PROGRESSING, f"Waiting for {want - ready} pods to be ready"
    return Status.HEALTHY, ""


def _daemonset(body: Mapping[str, Any]) -> tuple[Status, str]:
    status = body.get("status") or {}
    if status.get("numberAvailable", 0) < status.get("desiredNumberScheduled", 0):
        return Status.PROGRESSING, "Waiting for daemon set pods to be available"
    return Status.HEALTHY, ""


def _pod(body: Mapping[str, Any]) -> tuple[Status, str]:
    status = body.get("status") or {}
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _ERROR_REASONS:
            return Status.DEGRADED, str(waiting.get("message") or waiting["reason"])
    phase = status.get("phase")
    if phase == "Failed":
        return Status.DEGRADED, str(status.get("message", ""))
    if phase == "Succeeded":
        return Status.HEALTHY, ""
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return (Status.HEALTHY, "") if phase == "Running" and ready else (Status.PROGRESSING, "")


def _pvc(body: Mapping[str, Any]) -> tuple[Status, str]:
    phase = (body.get("status") or {}).get("phase")
    if phase == "Bound":
        return Status.HEALTHY, ""
    if phase == "Lost":
        return Status.DEGRADED, "claim lost"
    return Status.PROGRESSING, "Waiting for the claim to bind"


def _service(body: Mapping[str, Any]) -> tuple[Status, str]:
    balancer = (body.get("status") or {}).get("loadBalancer") or {}
    if (body.get("spec") or {}).get("type") == "LoadBalancer" and not balancer.get("ingress"):
        return Status.PROGRESSING, "Waiting for a load balancer"
    return Status.HEALTHY, ""


def _hpa(body: Mapping[str, Any]) -> tuple[Status, str]:
    for cond in (body.get("status") or {}).get("conditions") or []:
        if cond.get("status") == "False" and cond.get("type") in ("AbleToScale", "ScalingActive"):
            return Status.DEGRADED, str(cond.get("message", ""))
    return Status.HEALTHY, ""


_RULES: dict[str, Callable[[Mapping[str, Any]], tuple[Status, str]]] = {
    "Deployment": _deployment,
    "StatefulSet": _statefulset,
    "DaemonSet": _daemonset,
    "Pod": _pod,
    "PersistentVolumeClaim": _pvc,
    "Service": _service,
    "HorizontalPodAutoscaler": _hpa,
}
