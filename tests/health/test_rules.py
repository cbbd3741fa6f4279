"""Behaviour the upstream fixtures do not reach: ordering, aggregation, garbage
input, and the branches of each rule, shown on copies of real fixtures."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
import yaml

from gitmedic.reconciler.health import Health, HealthStatus, health_of, worst
from tests.conftest import DATA

ENGINE = DATA / "gitops-engine-health"
S = HealthStatus


def fixture(name: str) -> dict[str, Any]:
    path = ENGINE / ("utils-kube-testdata" if name == "nginx" else "testdata") / f"{name}.yaml"
    body: dict[str, Any] = yaml.safe_load(path.read_text())
    return body


def status_of(body: Any) -> HealthStatus | None:
    health = health_of(body)
    return None if health is None else health.status


def test_order_is_gitops_engines() -> None:
    order = [S.HEALTHY, S.SUSPENDED, S.PROGRESSING, S.MISSING, S.DEGRADED, S.UNKNOWN]
    assert list(HealthStatus) == order
    for better, worse in itertools.pairwise(order):
        assert worse.is_worse(better) and not better.is_worse(worse)
    assert not S.DEGRADED.is_worse(S.DEGRADED)


def test_worst_takes_the_worst_and_keeps_the_first_message() -> None:
    healths = [
        Health(S.PROGRESSING, "a"),
        None,
        Health(S.DEGRADED, "b"),
        Health(S.DEGRADED, "c"),
        Health(S.SUSPENDED),
    ]
    assert worst(healths) == Health(S.DEGRADED, "b")
    assert worst([]) == Health(S.HEALTHY)
    assert worst([None]).status is S.HEALTHY


def test_parse_unknown_spelling() -> None:
    assert HealthStatus.parse("Degraded") is S.DEGRADED
    assert HealthStatus.parse("degraded") is S.UNKNOWN
    assert HealthStatus.parse(None) is S.UNKNOWN


@pytest.mark.parametrize(
    "garbage",
    [None, 42, "Deployment", [], {}, {"kind": "Pod"}, {"apiVersion": "v1"}, {"apiVersion": 1}],
)
def test_garbage_is_unknown_with_a_message(garbage: Any) -> None:
    health = health_of(garbage)
    assert health is not None and health.status is S.UNKNOWN and health.message


@pytest.mark.parametrize(
    ("name", "path", "bad"),
    [
        ("nginx", ("spec", "replicas"), "three"),
        ("nginx", ("status",), ["not", "a", "map"]),
        ("statefulset", ("status", "readyReplicas"), True),
        ("pod-crashloop", ("status", "containerStatuses"), "oops"),
        ("job-failed", ("status", "conditions"), {"type": "Failed"}),
        ("pod-running-restart-always", ("spec", "restartPolicy"), 7),
    ],
)
def test_wrong_field_types_are_unknown_never_an_exception(
    name: str, path: tuple[str, ...], bad: Any
) -> None:
    body = fixture(name)
    node = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = bad
    health = health_of(body)
    assert health is not None and health.status is S.UNKNOWN
    assert health.message.startswith(f"failed to read {body['kind']}:")


def test_bad_hpa_annotation_is_unknown() -> None:
    body = fixture("hpa-v1-healthy")
    body["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"] = "{nope"
    health = health_of(body)
    assert health is not None and health.status is S.UNKNOWN
    assert "conditions annotation" in health.message


def test_unsupported_version_is_unknown_and_unjudged_kinds_have_none() -> None:
    body = fixture("nginx")
    body["apiVersion"] = "apps/v1beta2"
    health = health_of(body)
    assert health == Health(S.UNKNOWN, "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment")
    body["apiVersion"] = "extensions/v1beta1"  # gitops-engine no longer judges these
    assert health_of(body) is None
    assert health_of({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}) is None


def test_deletion_is_progressing_unless_a_hook_finalizer_holds_it() -> None:
    body = fixture("pod-crashloop")
    body["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert health_of(body) == Health(S.PROGRESSING, "Pending deletion")
    body["metadata"]["finalizers"] = ["argocd.argoproj.io/hook-finalizer"]
    assert status_of(body) is S.DEGRADED
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"deletionTimestamp": "x"}}
    assert status_of(configmap) is S.PROGRESSING


def test_deployment_branches() -> None:
    body = fixture("nginx")
    assert status_of(body) is S.HEALTHY
    stale = copy.deepcopy(body)
    stale["metadata"]["generation"] = body["status"]["observedGeneration"] + 1
    assert "generation" in (health_of(stale) or Health(S.HEALTHY)).message
    scaling = copy.deepcopy(body)
    scaling["spec"]["replicas"] = body["status"]["updatedReplicas"] + 2
    assert status_of(scaling) is S.PROGRESSING
    unavailable = copy.deepcopy(body)
    unavailable["status"]["availableReplicas"] = 0
    assert health_of(unavailable) == Health(
        S.PROGRESSING, "Waiting for rollout to finish: 0 of 1 updated replicas are available..."
    )


def _replicaset(wanted: int, available: int, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-6d4cf56db6", "generation": 2},
        "spec": {"replicas": wanted},
        "status": {"observedGeneration": 2, "availableReplicas": available, **status},
    }


def test_replicaset_rules() -> None:
    assert status_of(_replicaset(3, 3)) is S.HEALTHY
    assert health_of(_replicaset(3, 1)) == Health(
        S.PROGRESSING, "Waiting for rollout to finish: 1 out of 3 new replicas are available..."
    )
    failure = {"type": "ReplicaFailure", "status": "True", "message": 'pods "web" is forbidden'}
    assert health_of(_replicaset(3, 1, conditions=[failure])) == Health(
        S.DEGRADED, 'pods "web" is forbidden'
    )
    stale = _replicaset(3, 3)
    stale["metadata"]["generation"] = 3
    assert status_of(stale) is S.PROGRESSING


def test_daemonset_rolling_update_waits_for_available_pods() -> None:
    body = fixture("daemonset-ondelete")
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    body["status"].update(desiredNumberScheduled=3, updatedNumberScheduled=3, numberAvailable=2)
    assert status_of(body) is S.PROGRESSING
    body["status"]["numberAvailable"] = 3
    assert status_of(body) is S.HEALTHY
    body["status"]["updatedNumberScheduled"] = 1
    assert status_of(body) is S.PROGRESSING


def test_statefulset_rolling_and_partitioned_updates() -> None:
    body = fixture("statefulset")
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    body["status"]["updateRevision"] = "web-2"
    body["status"]["currentRevision"] = "web-1"
    assert status_of(body) is S.PROGRESSING
    body["status"]["currentRevision"] = "web-2"
    assert status_of(body) is S.HEALTHY
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    body["status"]["updatedReplicas"] = 0
    assert status_of(body) is S.PROGRESSING


def test_pod_without_restart_policy_is_judged_as_the_api_defaults_it() -> None:
    body = fixture("pod-crashloop")
    del body["spec"]["restartPolicy"]
    assert status_of(body) is S.DEGRADED


def test_pvc_lost_is_degraded_and_unknown_phase_is_unknown() -> None:
    body = fixture("pvc-bound")
    body["status"]["phase"] = "Lost"
    assert status_of(body) is S.DEGRADED
    body["status"]["phase"] = "Weird"
    assert status_of(body) is S.UNKNOWN


def test_suspended_flux_kustomization() -> None:
    body = yaml.safe_load(
        (DATA / "argocd-application" / "flux-kustomization" / "healthy.yaml").read_text()
    )
    body["spec"]["suspend"] = True
    assert health_of(body) == Health(S.SUSPENDED, "Kustomization is suspended")
    del body["spec"]["suspend"]
    del body["status"]
    assert health_of(body) == Health(S.PROGRESSING, "Status unknown")
