"""A container memory limit too small for any real process: it will be OOMKilled.

Threshold: :data:`MIN_MEMORY_LIMIT` = 16 MiB. Small static binaries do run in
little memory: the OpenTelemetry demo among our real fixtures runs its Go and
Rust services (checkout, currency, product-catalog, shipping) and valkey under
20Mi limits, and that is the smallest limit in the eight real applications. A
limit below 16 MiB leaves no room for any runtime plus its first request, so it
is a typo or an injected fault (FAULTS.md ``memory-limit-too-small`` sets
10Mi), and the result is OOMKilled / CrashLoopBackOff.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gitmedic.detectors.builtin._resources import quantity, resources
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.quantity import format_bytes
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="memory-limit-too-small",
    description="A container's memory limit is below 16Mi, too small for any real process "
    "(it will be OOMKilled).",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.CRITICAL,
    remediation="Restore the memory limit of the last working revision.",
    scope=Scope.BOTH,
    certain_because=(
        "a limit under 16 MiB leaves no room for any runtime: the container is OOMKilled"
    ),
    playbooks=("memory-limit-too-small",),
)
MIN_MEMORY_LIMIT = Decimal(16 * 1024 * 1024)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        for container in wl.containers():
            limit = quantity(container, "limits", "memory")
            if limit is None or limit >= MIN_MEMORY_LIMIT:
                continue
            shown = resources(container, "limits")["memory"]
            yield SPEC.finding(
                wl.ref,
                f"container {container.name}: memory limit {shown} is too small to run",
                evidence=f"resources.limits.memory={shown} ({format_bytes(limit)}) < "
                f"{format_bytes(MIN_MEMORY_LIMIT)}",
                params={
                    "container": container.name,
                    "container_field": container.list_field,
                    "limit": str(shown),
                },
            )
