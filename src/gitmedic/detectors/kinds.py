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

# Kinds that carry a pod template, and where it sits in the object.
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod")
