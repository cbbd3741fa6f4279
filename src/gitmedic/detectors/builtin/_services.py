"""Shared reading of Services for the service detectors."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.pod_owners import may_own_pods
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping


def selecting_services(snapshot: Snapshot) -> Iterator[tuple[Obj, dict[str, str]]]:
    """Services that select pods (skip ExternalName and selector-less Services)."""
    for svc in snapshot.of_kind("Service"):
        spec = svc.spec
        if spec.get("type") == "ExternalName":
            continue
        selector = {str(k): str(v) for k, v in mapping(spec.get("selector")).items()}
        if selector:
            yield svc, selector


def selected_workloads(snapshot: Snapshot, svc: Obj, selector: dict[str, str]) -> list[Workload]:
    return snapshot.workloads_selected_by(svc.namespace, selector)


def services_by_workload(snapshot: Snapshot) -> dict[Resource, list[Obj]]:
    """The Services selecting each workload (computed once per snapshot)."""

    def build() -> dict[Resource, list[Obj]]:
        index: dict[Resource, list[Obj]] = defaultdict(list)
        for svc, selector in selecting_services(snapshot):
            for wl in selected_workloads(snapshot, svc, selector):
                index[wl.ref].append(svc)
        return index

    return snapshot.derived("services.by-workload", build)


def custom_pod_owners(snapshot: Snapshot, namespace: str) -> list[Obj]:
    """Custom resources of ``namespace`` whose operator may create pods (and Services)
    the manifests do not show (:func:`gitmedic.detectors.pod_owners.may_own_pods`)."""

    def build() -> dict[str, list[Obj]]:
        index: dict[str, list[Obj]] = defaultdict(list)
        for obj in snapshot:
            if obj.namespace and may_own_pods(str(obj.body.get("apiVersion", "")), obj.kind):
                index[obj.namespace].append(obj)
        return index

    return list(snapshot.derived("services.custom-pod-owners", build).get(namespace, []))


def named(objs: list[Obj], limit: int = 3, hints: frozenset[str] = frozenset()) -> str:
    """``Prometheus k8s, Alertmanager main`` (and how many more), for summaries; those
    whose name or kind is among ``hints`` (a selector's values, say) first."""

    def order(o: Obj) -> tuple[bool, Resource]:
        return not ({o.name, o.kind.lower()} & hints), o.ref

    shown = ", ".join(f"{o.kind} {o.name}" for o in sorted(objs, key=order)[:limit])
    return shown + (f" and {len(objs) - limit} more" if len(objs) > limit else "")
