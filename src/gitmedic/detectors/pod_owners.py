"""What owns pods, and the labels their controllers add: data the snapshot selects with.

Three things real repositories contain that a plain template-label match misses:

- Pod owners beyond ``apps/v1``: a ReplicationController (``spec.template``), an
  Argo Rollouts ``Rollout`` (``spec.template``, or ``spec.workloadRef`` naming a
  Deployment whose template it runs).
- Labels a controller adds to the pods it creates, which Services may select:
  a StatefulSet's ``statefulset.kubernetes.io/pod-name: web-0`` (one Service per
  replica) and ``apps.kubernetes.io/pod-index``, ``controller-revision-hash``,
  ``pod-template-hash``, the Job labels. :func:`controller_label_matches` says
  whether a workload's pods can carry such a label with that value.
- Custom resources an operator turns into pods (:data:`POD_OWNING_CUSTOM_KINDS`,
  the Prometheus operator's Prometheus, Alertmanager and ThanosRuler): their
  pods are not in the manifests, so a Service in front of them selects nothing
  that the snapshot shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

JSON = Mapping[str, Any]

ROLLOUT_GROUP = "argoproj.io"

# Custom resources whose operator creates pods from them, by API group. Their
# pods carry labels the operator chooses (and the resource's ``podMetadata``),
# so the snapshot cannot say which Services select them.
POD_OWNING_CUSTOM_KINDS: Mapping[str, frozenset[str]] = {
    "monitoring.coreos.com": frozenset({"Prometheus", "Alertmanager", "ThanosRuler"}),
}

# API groups of Kubernetes itself: an object of any other group is a custom resource.
_BUILTIN_GROUP = re.compile(r"^(|[a-z0-9.-]*\.k8s\.io|apps|batch|autoscaling|policy|extensions)$")
# Custom resources that never own pods: what they produce is known, or nothing runs.
_NO_POD_GROUPS = frozenset(
    {
        "cert-manager.io",
        "external-secrets.io",
        "bitnami.com",
        "monitoring.coreos.com",  # its pod-owning kinds are listed above
        "networking.istio.io",
        "security.istio.io",
        "gateway.networking.k8s.io",
        "traefik.containo.us",
        "traefik.io",
        "policy.linkerd.io",
        "keda.sh",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
        "source.toolkit.fluxcd.io",
        "notification.toolkit.fluxcd.io",
        "image.toolkit.fluxcd.io",
        "apiextensions.k8s.io",
    }
)
# Argo's own kinds that do not run pods (Rollout does, and is a workload).
_NO_POD_KINDS = frozenset({"AnalysisTemplate", "ClusterAnalysisTemplate", "Experiment"})
_ARGO_CD_KINDS = frozenset({"Application", "ApplicationSet", "AppProject"})

# Labels each controller puts on the pods it creates, beyond the template's.
_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
_ANY_VALUE = {
    "StatefulSet": ("controller-revision-hash",),
    "DaemonSet": ("controller-revision-hash", "pod-template-generation"),
    "Deployment": ("pod-template-hash",),
    "Rollout": ("rollouts-pod-template-hash",),
    "Job": ("controller-uid", "batch.kubernetes.io/controller-uid"),
    "CronJob": ("controller-uid", "batch.kubernetes.io/controller-uid"),
}
_JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def may_own_pods(api_version: str, kind: str) -> bool:
    """Could an operator create pods from this custom resource?

    Listed pod owners, and any custom resource of a group not known to own none
    (an unknown CR may be an operator's app; saying so beats a false critical).
    """
    group = group_of(api_version)
    if kind in POD_OWNING_CUSTOM_KINDS.get(group, frozenset()):
        return True
    if _BUILTIN_GROUP.match(group) or group in _NO_POD_GROUPS:
        return False
    if group == ROLLOUT_GROUP:
        return kind not in _NO_POD_KINDS and kind not in _ARGO_CD_KINDS and kind != "Rollout"
    return True


def controller_label_keys(kind: str) -> frozenset[str]:
    """Every label key the controller of ``kind`` adds to its pods."""
    keys = set(_ANY_VALUE.get(kind, ()))
    if kind == "StatefulSet":
        keys |= {_POD_NAME_LABEL, _INDEX_LABEL}
    if kind in ("Job", "CronJob"):
        keys |= set(_JOB_NAME_LABELS)
    return frozenset(keys)


def controller_label_matches(kind: str, name: str, key: str, value: str) -> bool:
    """Can a pod of workload ``kind``/``name`` carry the controller-added label ``key=value``?

    Any ordinal counts for a StatefulSet's pod: an autoscaler may run more
    replicas than the manifest asks for, so ``web-3`` of three is not proof.
    """
    if key in _ANY_VALUE.get(kind, ()):
        return True
    if kind == "StatefulSet" and key in (_POD_NAME_LABEL, _INDEX_LABEL):
        index = value.removeprefix(f"{name}-") if key == _POD_NAME_LABEL else value
        if index == value and key == _POD_NAME_LABEL:
            return False  # another StatefulSet's pod
        return index.isdigit()
    if key in _JOB_NAME_LABELS and kind == "Job":
        return value == name
    if key in _JOB_NAME_LABELS and kind == "CronJob":
        return value.removeprefix(f"{name}-").isdigit() and value != name
    return False


def rollout_template_ref(spec: JSON) -> tuple[str, str] | None:
    """(kind, name) a Rollout's ``workloadRef`` names, when it takes its template from one."""
    ref = spec.get("workloadRef")
    if not isinstance(ref, Mapping) or "template" in spec:
        return None
    kind, name = ref.get("kind"), ref.get("name")
    if isinstance(kind, str) and isinstance(name, str) and kind and name:
        return kind, name
    return None
