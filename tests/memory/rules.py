"""A learned rule (CEL) and the snapshots it judges, shared by the memory tests."""

from __future__ import annotations

from pathlib import Path

from gitmedic.detectors import Obj, Resource, Snapshot

GOOD = """\
id: learned-zero-replicas
description: A Deployment scaled to zero.
severity: critical
reads: [Deployment]
match: has(object.spec.replicas) && object.spec.replicas == 0
message: "{kind} {name} has no replicas"
playbooks: [scaled-to-zero]
params:
  replicas: object.spec.replicas
"""


def deployment(replicas: int, name: str = "cart") -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": replicas},
    }


def snapshot(replicas: int) -> Snapshot:
    return Snapshot([Obj(Resource("Deployment", "shop", "cart", "apps/v1"), deployment(replicas))])


def write_rule(repo: Path, name: str, text: str) -> Path:
    path = repo / ".gitmedic" / "rules" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
