"""Field paths inside workloads, so a finding names exactly the field a fix edits.

A deterministic fix (a playbook, or the bisect restoring one field from Git
history) needs the path of the bad value inside the object, not prose. Paths
are dotted with list indexes, e.g.
``spec.template.spec.containers[1].livenessProbe.periodSeconds``; map keys
containing dots are bracketed and quoted (``nodeSelector["kubernetes.io/os"]``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gitmedic.detectors.snapshot import JSON, Workload, as_list, mapping

_POD_SPEC = {"Pod": "spec", "CronJob": "spec.jobTemplate.spec.template.spec"}


@dataclass(frozen=True)
class PlacedContainer:
    """A container with where it sits: its list, its index and its path."""

    body: JSON
    init: bool
    index: int
    path: str

    @property
    def name(self) -> str:
        return str(self.body.get("name", ""))

    @property
    def ports(self) -> list[JSON]:
        return [mapping(p) for p in as_list(self.body.get("ports"))]

    @property
    def sidecar(self) -> bool:
        """A native sidecar: an init container that keeps running beside the app."""
        return self.init and self.body.get("restartPolicy") == "Always"


def pod_spec_path(kind: str) -> str:
    return _POD_SPEC.get(kind, "spec.template.spec")


def key_path(prefix: str, key: str) -> str:
    """``prefix.key``, or ``prefix["key"]`` where the key itself holds dots or slashes."""
    if key.replace("-", "").replace("_", "").isalnum():
        return f"{prefix}.{key}"
    return f'{prefix}["{key}"]'


def placed_containers(workload: Workload, *, init: bool = True) -> Iterator[PlacedContainer]:
    """Containers then init containers, each with its field path."""
    base = pod_spec_path(workload.obj.kind)
    lists = [("containers", False)] + ([("initContainers", True)] if init else [])
    for field, is_init in lists:
        for index, body in enumerate(as_list(workload.pod_spec.get(field))):
            if isinstance(body, Mapping):
                yield PlacedContainer(body, is_init, index, f"{base}.{field}[{index}]")


def running_containers(workload: Workload) -> Iterator[PlacedContainer]:
    """Containers that run side by side in the pod: app containers and native sidecars."""
    return (c for c in placed_containers(workload) if not c.init or c.sidecar)
