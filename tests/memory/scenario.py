"""A committed incident on a real app (online-boutique) in a real git repo.

The fault class no built-in detector or playbook covers: a Service with
``publishNotReadyAddresses: true`` (traffic reaches pods that fail readiness).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gitmedic.bot.memory.outcomes import OutcomeRecord
from gitmedic.bot.memory.reflection import ReflectionInput
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.detectors import Finding, Obj, Resource, Severity, Snapshot
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import APPS

MANIFESTS = "apps/boutique/manifests.yaml"
NAMESPACE = "boutique"
FIELD = ("spec", "publishNotReadyAddresses")


def git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    proc = subprocess.run(
        ["git", "-C", str(repo), *ident, *args], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def manifest_repo(tmp_path: Path) -> Path:
    """A git repo holding online-boutique's manifests, one commit."""
    repo = tmp_path / "repo"
    (repo / MANIFESTS).parent.mkdir(parents=True)
    shutil.copy(APPS / "online-boutique/release/kubernetes-manifests.yaml", repo / MANIFESTS)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit_all(repo, "boutique")
    return repo


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def healthy(repo: Path) -> Snapshot:
    return load_desired(repo / MANIFESTS, namespace=NAMESPACE).snapshot


def with_value(
    snapshot: Snapshot, kind: str, name: str, path: Sequence[str], value: Any
) -> Snapshot:
    objs = []
    for obj in snapshot:
        if obj.kind == kind and obj.name == name:
            body = copy.deepcopy(dict(obj.body))
            node = body
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
            obj = Obj(obj.ref, body, obj.source)
        objs.append(obj)
    return Snapshot(objs, mode=snapshot.mode)


def plus(snapshot: Snapshot, *bodies: Mapping[str, Any]) -> Snapshot:
    extra = [
        Obj(
            Resource(b["kind"], b["metadata"].get("namespace", NAMESPACE), b["metadata"]["name"],
                     b["apiVersion"]),
            b,
        )
        for b in bodies
    ]  # fmt: skip
    return Snapshot([*snapshot, *extra], mode=snapshot.mode)


def outcome(incident: str = "inc-1", strategy: str = "llm", **kw: Any) -> OutcomeRecord:
    values: dict[str, Any] = {
        "id": incident,
        "commits": ("0123abc",),
        "detectors": ("http-probe",),
        "playbooks": (),
        "strategy": strategy,
        "classification": "service-publishes-not-ready",
        "tokens": 5200,
        "cost_usd": 0.01,
        "opened_at": "2026-11-29T10:00:00Z",
        "closed_at": "2026-11-29T10:20:00Z",
        "app": "boutique",
    }
    return OutcomeRecord(**(values | kw))


def incident(
    base: Snapshot, *, name: str = "frontend", strategy: str = "llm", pre: Snapshot | None = None
) -> ReflectionInput:
    """Service ``name`` had publishNotReadyAddresses: true; the fix removed it."""
    ref = Resource("Service", NAMESPACE, name, "v1")
    symptom = Finding(
        detector="http-probe",
        rule="errors",
        severity=Severity.CRITICAL,
        resource=ref,
        summary=f"12% of requests to {name} fail with connection refused",
    )
    return ReflectionInput(
        incident="inc-1",
        app="boutique",
        findings=(symptom,),
        strategy=strategy,
        edits=(Edit(Op.REMOVE, MANIFESTS, ref, FIELD),),
        diagnosis=f"{name} publishes the addresses of pods that are not ready",
        introducing_commit="0123abc",
        snapshots=Snapshots(pre or with_value(base, "Service", name, FIELD, True), base, base),
        outcome=outcome(strategy=strategy),
    )


def apply_change(repo: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
