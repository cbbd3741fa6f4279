"""Health of the controllers that run pods: Deployment, StatefulSet, DaemonSet,
ReplicaSet and Job, with gitops-engine's rules and messages (which it borrowed
from ``kubectl rollout status``)."""

from __future__ import annotations

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus

H, S, P, D = (
    HealthStatus.HEALTHY,
    HealthStatus.SUSPENDED,
    HealthStatus.PROGRESSING,
    HealthStatus.DEGRADED,
)


def _generations(obj: JSON) -> tuple[int, int]:
    return f.integer(obj, "metadata", "generation"), f.integer(obj, "status", "observedGeneration")


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def deployment_health(obj: JSON) -> Health:
    if f.boolean(obj, "spec", "paused"):
        return Health(S, "Deployment is paused")
    generation, observed = _generations(obj)
    if generation > observed:
        return Health(
            P,
            "Waiting for rollout to finish: observed deployment generation less than desired "
            "generation",
        )
    progressing = f.condition(obj, "Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        name = f.string(obj, "metadata", "name")
        return Health(D, f"Deployment {_quoted(name)} exceeded its progress deadline")
    return _rollout_progress(obj) or Health(H)


def _rollout_progress(obj: JSON) -> Health | None:
    wanted = f.optional_integer(obj, "spec", "replicas")
    updated = f.integer(obj, "status", "updatedReplicas")
    replicas = f.integer(obj, "status", "replicas")
    available = f.integer(obj, "status", "availableReplicas")
    prefix = "Waiting for rollout to finish: "
    if wanted is not None and updated < wanted:
        return Health(P, f"{prefix}{updated} out of {wanted} new replicas have been updated...")
    if replicas > updated:
        return Health(P, f"{prefix}{replicas - updated} old replicas are pending termination...")
    if available < updated:
        return Health(P, f"{prefix}{available} of {updated} updated replicas are available...")
    return None


def statefulset_health(obj: JSON) -> Health:
    generation, observed = _generations(obj)
    if observed == 0 or generation > observed:
        return Health(P, "Waiting for statefulset spec update to be observed...")
    wanted = f.optional_integer(obj, "spec", "replicas")
    ready = f.integer(obj, "status", "readyReplicas")
    if wanted is not None and ready < wanted:
        return Health(P, f"Waiting for {wanted - ready} pods to be ready...")
    strategy = f.mapping(obj, "spec", "updateStrategy")
    updated = f.integer(obj, "status", "updatedReplicas")
    if strategy.get("type") == "RollingUpdate" and strategy.get("rollingUpdate") is not None:
        partition = f.optional_integer(strategy, "rollingUpdate", "partition")
        if wanted is not None and partition is not None and updated < wanted - partition:
            return Health(
                P,
                f"Waiting for partitioned roll out to finish: {updated} out of "
                f"{wanted - partition} new pods have been updated...",
            )
        return Health(H, f"partitioned roll out complete: {updated} new pods have been updated...")
    if strategy.get("type") == "OnDelete":
        return Health(H, f"statefulset has {ready} ready pods")
    return _statefulset_revision(obj, updated)


def _statefulset_revision(obj: JSON, updated: int) -> Health:
    update_rev = f.string(obj, "status", "updateRevision")
    current_rev = f.string(obj, "status", "currentRevision")
    if update_rev != current_rev:
        return Health(
            P,
            f"waiting for statefulset rolling update to complete {updated} pods at revision "
            f"{update_rev}...",
        )
    current = f.integer(obj, "status", "currentReplicas")
    return Health(
        H, f"statefulset rolling update complete {current} pods at revision {current_rev}..."
    )


def daemonset_health(obj: JSON) -> Health:
    generation, observed = _generations(obj)
    if generation > observed:
        return Health(
            P,
            "Waiting for rollout to finish: observed daemon set generation less than desired "
            "generation",
        )
    desired = f.integer(obj, "status", "desiredNumberScheduled")
    updated = f.integer(obj, "status", "updatedNumberScheduled")
    if f.string(obj, "spec", "updateStrategy", "type") == "OnDelete":
        return Health(H, f"daemon set {updated} out of {desired} new pods have been updated")
    name = _quoted(f.string(obj, "metadata", "name"))
    if updated < desired:
        return Health(
            P,
            f"Waiting for daemon set {name} rollout to finish: {updated} out of {desired} new "
            "pods have been updated...",
        )
    available = f.integer(obj, "status", "numberAvailable")
    if available < desired:
        return Health(
            P,
            f"Waiting for daemon set {name} rollout to finish: {available} of {desired} updated "
            "pods are available...",
        )
    return Health(H)


def replicaset_health(obj: JSON) -> Health:
    generation, observed = _generations(obj)
    if generation > observed:
        return Health(
            P,
            "Waiting for rollout to finish: observed replica set generation less than desired "
            "generation",
        )
    failure = f.condition(obj, "ReplicaFailure")
    if failure is not None and failure.get("status") == "True":
        return Health(D, str(failure.get("message") or ""))
    wanted = f.optional_integer(obj, "spec", "replicas")
    available = f.integer(obj, "status", "availableReplicas")
    if wanted is not None and available < wanted:
        return Health(
            P,
            f"Waiting for rollout to finish: {available} out of {wanted} new replicas are "
            "available...",
        )
    return Health(H)


def job_health(obj: JSON) -> Health:
    failed = complete = suspended = False
    fail_message = message = ""
    for cond in f.items(obj, "status", "conditions"):
        kind, text = cond.get("type"), str(cond.get("message") or "")
        if kind == "Failed":
            failed = complete = True
            fail_message = text
        elif kind in ("Complete", "Suspended"):
            complete = True
            message = text
            suspended = suspended or (kind == "Suspended" and cond.get("status") == "True")
    if not complete:
        return Health(P, message)
    if failed:
        return Health(D, fail_message)
    return Health(S if suspended else H, message)
