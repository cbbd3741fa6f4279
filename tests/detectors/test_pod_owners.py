"""Pod owners and the labels their controllers add (gitmedic.detectors.pod_owners)."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.detectors import Mode, Obj, Resource, Snapshot
from gitmedic.detectors.pod_owners import controller_label_matches, may_own_pods


@pytest.mark.parametrize(
    ("kind", "name", "key", "value", "expected"),
    [
        ("StatefulSet", "web", "statefulset.kubernetes.io/pod-name", "web-0", True),
        ("StatefulSet", "web", "statefulset.kubernetes.io/pod-name", "web-7", True),  # HPA
        ("StatefulSet", "web", "statefulset.kubernetes.io/pod-name", "db-0", False),
        ("StatefulSet", "web", "statefulset.kubernetes.io/pod-name", "web-x", False),
        ("StatefulSet", "web", "apps.kubernetes.io/pod-index", "2", True),
        ("Deployment", "web", "statefulset.kubernetes.io/pod-name", "web-0", False),
        ("Deployment", "web", "pod-template-hash", "5d8f7c", True),
        ("DaemonSet", "agent", "controller-revision-hash", "6b9", True),
        ("Job", "migrate", "batch.kubernetes.io/job-name", "migrate", True),
        ("Job", "migrate", "job-name", "other", False),
        ("CronJob", "backup", "job-name", "backup-28456320", True),
        ("CronJob", "backup", "job-name", "backup", False),
    ],
)
def test_controller_labels(kind: str, name: str, key: str, value: str, expected: bool) -> None:
    assert controller_label_matches(kind, name, key, value) is expected


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        ("monitoring.coreos.com/v1", "Prometheus", True),
        ("monitoring.coreos.com/v1", "Alertmanager", True),
        ("monitoring.coreos.com/v1", "ThanosRuler", True),
        ("monitoring.coreos.com/v1", "ServiceMonitor", False),
        ("acid.zalan.do/v1", "postgresql", True),  # an unknown CR may be an operator's app
        ("cert-manager.io/v1", "Certificate", False),
        ("networking.istio.io/v1", "VirtualService", False),
        ("argoproj.io/v1alpha1", "Rollout", False),  # a workload of its own, not via operator
        ("argoproj.io/v1alpha1", "AnalysisTemplate", False),
        ("apps/v1", "Deployment", False),
        ("rbac.authorization.k8s.io/v1", "Role", False),
        ("v1", "ConfigMap", False),
    ],
)
def test_which_custom_resources_may_own_pods(api_version: str, kind: str, expected: bool) -> None:
    assert may_own_pods(api_version, kind) is expected


def obj(kind: str, name: str, body: dict[str, Any]) -> Obj:
    api = {"Rollout": "argoproj.io/v1alpha1", "ReplicaSet": "apps/v1"}.get(kind, "v1")
    return Obj(Resource(kind, "shop", name, api), {"apiVersion": api, "kind": kind, **body})


def owned_replicaset(owner: str) -> Obj:
    meta = {"name": "cart-7f9", "ownerReferences": [{"kind": owner, "name": "cart"}]}
    template = {"metadata": {"labels": {"app": "cart"}}, "spec": {"containers": [{"name": "c"}]}}
    return obj("ReplicaSet", "cart-7f9", {"metadata": meta, "spec": {"template": template}})


def test_a_rollouts_replicaset_stands_for_it_where_the_rollout_is_not_read() -> None:
    live = Snapshot([owned_replicaset("Rollout")], mode=Mode.LIVE)
    assert [w.ref.name for w in live.workloads()] == ["cart-7f9"]
    rollout = obj("Rollout", "cart", {"metadata": {"name": "cart"}, "spec": {}})
    with_owner = Snapshot([owned_replicaset("Rollout"), rollout])
    assert [w.ref.name for w in with_owner.workloads()] == ["cart"]


def test_a_rollout_runs_the_template_its_workload_ref_names() -> None:
    deployment = Obj(
        Resource("Deployment", "shop", "cart", "apps/v1"),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "cart"},
            "spec": {"replicas": 0, "template": {"metadata": {"labels": {"app": "cart"}}}},
        },
    )
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "cart"}
    rollout = obj("Rollout", "cart", {"metadata": {"name": "cart"}, "spec": {"workloadRef": ref}})
    snap = Snapshot([deployment, rollout])
    workload = snap.workload(rollout.ref)
    assert workload is not None and workload.template_labels == {"app": "cart"}
    assert {w.ref.kind for w in snap.workloads_selected_by("shop", {"app": "cart"})} == {
        "Deployment",
        "Rollout",
    }
