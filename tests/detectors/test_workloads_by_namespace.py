"""A namespace's workloads are indexed once; each answer is the same as filtering all of
them, and a copy the caller may change."""

from __future__ import annotations

from typing import Any

from gitmedic.detectors import Obj, Resource, Snapshot


def _deployment(ns: str, name: str, labels: dict[str, str]) -> Obj:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": []}}},
    }
    return Obj(Resource("Deployment", ns, name, "apps/v1"), body)


def _statefulset(ns: str, name: str) -> Obj:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"metadata": {"labels": {}}, "spec": {"containers": []}}},
    }
    return Obj(Resource("StatefulSet", ns, name, "apps/v1"), body)


SNAP = Snapshot(
    [
        _deployment("a", "web", {"app": "web"}),
        _deployment("b", "web", {"app": "web"}),
        _deployment("a", "api", {"app": "api"}),
        _statefulset("a", "db"),
        _statefulset("b", "db"),
    ]
)


def test_each_namespace_has_its_own_workloads() -> None:
    everything = SNAP.workloads()
    for ns in ("a", "b", "c"):
        assert SNAP.workloads(ns) == [w for w in everything if w.obj.namespace == ns]


def test_an_answer_is_a_copy() -> None:
    SNAP.workloads("a").clear()
    assert len(SNAP.workloads("a")) == 3


def test_selection_by_a_controller_label_stays_in_its_namespace() -> None:
    # only a label the controller adds: every workload of the namespace is a candidate
    got = SNAP.workloads_selected_by("b", {"statefulset.kubernetes.io/pod-name": "db-0"})
    assert [(w.obj.namespace, w.obj.name) for w in got] == [("b", "db")]
    assert [w.obj.name for w in SNAP.workloads_selected_by("a", {"app": "api"})] == ["api"]
