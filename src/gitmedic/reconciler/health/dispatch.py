"""``health_of(body)``: the health of any object, or None for kinds without one.

Dispatch is gitops-engine's: by API group and kind first (a kind we do not
judge has no health, like an Argo CD Application or a ConfigMap), then the
version must be one the rule knows, else Unknown with "unsupported ... GVK".
An object being deleted is Progressing whatever its kind, unless an Argo CD hook
finalizer holds it. Nothing here raises: garbage input, or a field of the wrong
type, is Unknown with a message saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.autoscaling import hpa_health
from gitmedic.reconciler.health.fields import JSON, Malformed
from gitmedic.reconciler.health.flux import helmrelease_health, kustomization_health
from gitmedic.reconciler.health.network import apiservice_health, ingress_health, service_health
from gitmedic.reconciler.health.pod import pod_health
from gitmedic.reconciler.health.rollout import rollout_health
from gitmedic.reconciler.health.status import Health, HealthStatus
from gitmedic.reconciler.health.storage import pvc_health
from gitmedic.reconciler.health.workloads import (
    daemonset_health,
    deployment_health,
    job_health,
    replicaset_health,
    statefulset_health,
)

HealthFn = Callable[[JSON], Health]
HOOK_FINALIZER = "argocd.argoproj.io/hook-finalizer"


def _rule(fn: HealthFn, *versions: str) -> tuple[HealthFn, frozenset[str]]:
    return fn, frozenset(versions)


_FLUX_KUSTOMIZE = ("v1", "v1beta1", "v1beta2")
_FLUX_HELM = ("v2", "v2beta1", "v2beta2")

# (group, kind) -> (rule, the versions it understands)
RULES: Mapping[tuple[str, str], tuple[HealthFn, frozenset[str]]] = {
    ("apps", "Deployment"): _rule(deployment_health, "v1"),
    ("apps", "StatefulSet"): _rule(statefulset_health, "v1"),
    ("apps", "ReplicaSet"): _rule(replicaset_health, "v1"),
    ("apps", "DaemonSet"): _rule(daemonset_health, "v1"),
    ("extensions", "Ingress"): _rule(ingress_health, "v1beta1"),
    ("networking.k8s.io", "Ingress"): _rule(ingress_health, "v1", "v1beta1"),
    ("apiregistration.k8s.io", "APIService"): _rule(apiservice_health, "v1", "v1beta1"),
    ("", "Service"): _rule(service_health, "v1"),
    ("", "PersistentVolumeClaim"): _rule(pvc_health, "v1"),
    ("", "Pod"): _rule(pod_health, "v1"),
    ("batch", "Job"): _rule(job_health, "v1"),
    ("autoscaling", "HorizontalPodAutoscaler"): _rule(hpa_health, "v1", "v2", "v2beta1", "v2beta2"),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): _rule(kustomization_health, *_FLUX_KUSTOMIZE),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): _rule(helmrelease_health, *_FLUX_HELM),
    ("argoproj.io", "Rollout"): _rule(rollout_health, "v1alpha1"),
}


def health_of(body: Any) -> Health | None:
    """The health of one object in the API's JSON shape; None if its kind has none."""
    if not isinstance(body, Mapping):
        return Health(HealthStatus.UNKNOWN, f"object is not a mapping: {type(body).__name__}")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        return Health(HealthStatus.UNKNOWN, "object has no apiVersion or kind")
    try:
        return _assess(body, api_version, kind)
    except Malformed as err:
        return Health(HealthStatus.UNKNOWN, f"failed to read {kind}: {err}")


def _assess(body: JSON, api_version: str, kind: str) -> Health | None:
    if _pending_deletion(body):
        return Health(HealthStatus.PROGRESSING, "Pending deletion")
    group, _, version = api_version.rpartition("/")
    found = RULES.get((group, kind))
    if found is None:
        return None
    fn, versions = found
    if version not in versions:
        return Health(
            HealthStatus.UNKNOWN,
            f"unsupported {kind} GVK: {group}/{version}, Kind={kind}",
        )
    return fn(body)


def _pending_deletion(body: JSON) -> bool:
    meta = f.mapping(body, "metadata")
    if meta.get("deletionTimestamp") is None:
        return False
    finalizers = meta.get("finalizers")
    return not (isinstance(finalizers, list) and HOOK_FINALIZER in finalizers)
