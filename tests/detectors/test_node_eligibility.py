"""Which nodes a pod may run on: taints and tolerations, cordons, selectors, unknown nodes."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.detectors import Obj, Resource, Snapshot
from gitmedic.detectors.builtin._nodes import cluster_nodes, eligible_nodes

GPU_TAINT = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


def node(name: str, *, taints: list[dict[str, str]] | None = None, **spec: Any) -> Obj:
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": name.rstrip("0123456789")}},
        "spec": {"taints": taints or [], **spec},
    }
    return Obj(Resource("Node", "", name), body)


SNAPSHOT = Snapshot(
    [
        node("cpu1"),
        node("gpu1", taints=[GPU_TAINT]),
        node("edge1", taints=[{"key": "edge", "effect": "PreferNoSchedule"}]),
        node("old1", unschedulable=True),
    ]
)


def names(pod_spec: dict[str, Any]) -> list[str]:
    found = eligible_nodes(SNAPSHOT, pod_spec)
    assert found is not None
    return sorted(n.name for n in found)


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ([], ["cpu1", "edge1"]),
        (
            [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
            ["cpu1", "edge1", "gpu1"],
        ),
        ([{"key": "gpu", "operator": "Exists"}], ["cpu1", "edge1", "gpu1"]),
        ([{"key": "gpu", "value": "false"}], ["cpu1", "edge1"]),
        ([{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}], ["cpu1", "edge1"]),
        ([{"operator": "Exists"}], ["cpu1", "edge1", "gpu1", "old1"]),
        (
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
            ["cpu1", "edge1", "old1"],
        ),
    ],
)
def test_tolerations_admit_tainted_and_cordoned_nodes(
    tolerations: list[dict[str, str]], expected: list[str]
) -> None:
    assert names({"tolerations": tolerations}) == expected


def test_selector_affinity_and_node_name_narrow_the_nodes() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["edge"]}]}
                ]
            }
        }
    }
    assert names({"nodeSelector": {"pool": "cpu"}}) == ["cpu1"]
    assert names({"affinity": affinity}) == ["edge1"]
    assert names({"nodeName": "cpu1", "nodeSelector": {"pool": "edge"}}) == []
    empty_term = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}
        }
    }
    assert names({"affinity": empty_term}) == []


def test_a_snapshot_without_nodes_knows_none() -> None:
    empty = Snapshot([])
    assert cluster_nodes(empty) is None
    assert eligible_nodes(empty, {}) is None


def test_hostname_label_defaults_to_the_node_name() -> None:
    nodes = cluster_nodes(SNAPSHOT)
    assert nodes is not None
    assert {n.labels["kubernetes.io/hostname"] for n in nodes} == {"cpu1", "gpu1", "edge1", "old1"}
