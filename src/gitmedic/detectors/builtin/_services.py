"""Shared reading of Services for the service detectors."""

from __future__ import annotations

from collections.abc import Iterator

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
