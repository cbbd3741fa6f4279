"""Shared reading of Services for the service detectors."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from gitmedic.detectors.finding import Resource
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
