"""A container that declares the same env var twice: the later value silently wins."""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.finding import Finding, Severity, mask
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="env-duplicate",
    description="A container lists the same environment variable name more than once.",
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.WARNING,
    remediation="Remove the later duplicate so the intended value is the only one.",
    scope=Scope.BOTH,
    certain_because=("never critical (a warning: the later value silently wins)"),
    playbooks=("env-shadowed",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        for container in wl.containers():
            positions: dict[str, list[int]] = {}
            for i, env in enumerate(container.env):
                positions.setdefault(str(env.get("name", "")), []).append(i)
            for name, idx in sorted(positions.items()):
                if len(idx) < 2 or not name:
                    continue
                values = [container.env[i].get("value") for i in idx]
                shown = [_shown(name, v) for v in values]
                yield SPEC.finding(
                    wl.ref,
                    f"{container.name}: env {name} is set {len(idx)} times; the last one wins",
                    rule="env-duplicate",
                    evidence=f"values in order: {shown}",
                    params={
                        "container": container.name,
                        "container_field": container.list_field,
                        "env": name,
                        "indexes": idx,
                    },
                )


def _shown(name: str, value: object) -> str:
    if value is None:
        return "<valueFrom>"
    text = str(value)
    return mask(text) if looks_secret(name) else text


def looks_secret(name: str) -> bool:
    lowered = name.lower()
    return any(
        w in lowered
        for w in (
            "password",
            "passwd",
            "secret",
            "token",
            "apikey",
            "api_key",
            "credential",
            "private",
        )
    )
