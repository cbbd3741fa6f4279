"""Which Kubernetes kinds are cluster-scoped, and which carry a pod template.

Data only, shared by the snapshot (which re-exports both names), the loader, the
live reader and the sim, so an object's namespace is decided the same way everywhere.
"""

from __future__ import annotations

# Kinds that live outside any namespace: their objects name none.
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "StorageClass",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "PriorityClass",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
        "IngressClass",
        "RuntimeClass",
        "CSIDriver",
        "VolumeAttachment",
        "PodSecurityPolicy",
        "ClusterIssuer",
    }
)

# Kinds that own pods through a pod template (``spec.template``; a CronJob's in its
# jobTemplate; an Argo Rollout's, or the one its ``workloadRef`` names).
WORKLOAD_KINDS = (
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "Pod",
    "ReplicationController",
    "Rollout",
)
# Workload kinds defined by a CRD: a repository without one may not install it at all.
CUSTOM_WORKLOAD_KINDS = frozenset({"Rollout"})
# Pod owners the live reader does not list (gitmedic.bot.cli.rbac.NOT_LISTED_LIVE): live,
# the ReplicaSets and Pods they own are the top-level workloads, as before they were modelled.
LISTED_DESIRED_ONLY = frozenset({"ReplicationController", "Rollout"})
