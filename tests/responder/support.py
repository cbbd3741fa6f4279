"""A real app in a fresh git repo, faults committed through the Edit API, and the
pipeline the bot runs: detectors -> persistence -> incident -> responder.

Live-only symptoms come from a crafted live snapshot: the faulty desired objects
plus pods whose status shows what the kubelet would report (an image that does
not pull, a crash loop, an OOM kill) and, where scheduling matters, Nodes.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmedic.bot.responder.incident import Incident, Incidents
from gitmedic.bot.responder.states import key
from gitmedic.detectors import Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.runner import Persistence, thresholds_of
from gitmedic.detectors.snapshot import Mode
from gitmedic.reconciler.git import Git
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.conftest import APPS, real_apps

REGISTRY = builtin_registry()
POD = "spec.template.spec."
Change = tuple[Op, str, Any, int | None]
LiveFn = Callable[[Snapshot], list[Obj]]


def set_(path: str, value: Any) -> Change:
    return (Op.SET, path, value, None)


def ins(path: str, value: Any, index: int | None = None) -> Change:
    return (Op.INSERT, path, value, index)


def rm(path: str) -> Change:
    return (Op.REMOVE, path, None, None)


DELETE: Change = (Op.REMOVE_OBJECT, "", None, None)


def add(body: dict[str, Any]) -> Change:
    return (Op.ADD_OBJECT, "", body, None)


@dataclass(frozen=True)
class Touch:
    """Changes to one object (kind/name in the app's namespace)."""

    kind: str
    name: str
    changes: tuple[Change, ...]
    file: str = ""  # for add_object: the repo file (default: the app's first file)


@dataclass(frozen=True)
class Fault:
    name: str
    app: str
    touches: tuple[Touch, ...]
    live: LiveFn | None = None  # extra live objects showing the symptom
    nodes: int = 0  # Node objects in the live state

    @property
    def id(self) -> str:
        return f"{self.name}@{self.app}"


def fault(name: str, app: str, kind: str, obj: str, *changes: Change, **kw: Any) -> Fault:
    return Fault(name, app, (Touch(kind, obj, tuple(changes)),), **kw)


# -- the app's repo -----------------------------------------------------------------------


@dataclass
class AppRepo:
    git: Git
    repo: ManifestRepo
    nodes: list[Obj] = field(default_factory=list)
    extra_live: list[Obj] = field(default_factory=list)

    def commit(self, message: str, *touches: Touch) -> str:
        self.repo.apply(self.edits(touches))
        return self.git.commit(message, ".")

    def edits(self, touches: Sequence[Touch]) -> list[Edit]:
        out = []
        for t in touches:
            ref = Resource(t.kind, self.repo.namespace, t.name)
            for op, path, value, index in t.changes:
                file = t.file or (
                    self._first_file() if op is Op.ADD_OBJECT else self.repo.locate(ref)
                )
                out.append(Edit(op, file, ref, parse_path(path) if path else (), value, index))
        return out

    def _first_file(self) -> str:
        return self.repo.objects()[0].file

    def files(self) -> dict[str, bytes]:
        root = self.git.root
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted((root / "apps").rglob("*"))
            if p.is_file()
        }

    def desired(self) -> Snapshot:
        state = load_desired(self.git.root / self.repo.path, namespace=self.repo.namespace)
        return Snapshot([*state.snapshot, *self.nodes], mode=Mode.DESIRED)

    def live(self, fault: Fault | None = None) -> Snapshot:
        desired = self.desired()
        extra = fault.live(desired) if fault and fault.live else []
        return Snapshot([*desired, *extra, *self.extra_live], mode=Mode.LIVE)

    def findings(self, fault: Fault | None = None) -> list[Finding]:
        """Desired-state findings, plus the live ones when the fault has a live symptom."""
        found = list(run_detectors(REGISTRY, self.desired()).findings)
        if fault is not None and fault.live is not None:
            live = run_detectors(REGISTRY, self.live(fault)).findings
            found += [f for f in live if REGISTRY.get(f.detector).spec.scope.value == "live"]
        return found


def app_repo(root: Path, app_name: str, nodes: int = 0) -> AppRepo:
    app = next(a for a in real_apps() if a.name == app_name)
    rel = app.path.relative_to(APPS).as_posix()
    git = Git.init(root)
    target = root / "apps" / rel
    if app.path.is_dir():
        shutil.copytree(app.path, target)
    else:
        target.parent.mkdir(parents=True)
        shutil.copyfile(app.path, target)
    git.commit("baseline: upstream manifests", ".")
    return AppRepo(git, ManifestRepo(root, f"apps/{rel}", app.namespace), make_nodes(nodes))


def make_nodes(count: int) -> list[Obj]:
    out = []
    for i in range(count):
        name = f"worker-{i}"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "beta.kubernetes.io/os": "linux",
        }
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
        out.append(Obj(Resource("Node", "", name), body))
    return out


# -- the pipeline ---------------------------------------------------------------------------


def incident_of(app: str, new: Sequence[Finding], at: float, live: Snapshot | None) -> Incident:
    """Two evaluations through persistence, the activations folded into an incident."""
    persistence = Persistence()
    for _ in range(3):
        persistence, transition = persistence.observe(new, thresholds_of(REGISTRY))
        if transition.activated:
            break
    incidents = Incidents(clock=lambda: at)
    incidents, changed = incidents.observe(app, transition, live=live)
    assert len(changed) == 1
    return changed[0]


def new_findings(before: Sequence[Finding], after: Sequence[Finding]) -> list[Finding]:
    old = {key(f) for f in before}
    return [f for f in after if key(f) not in old]


def inject(app: AppRepo, f: Fault) -> tuple[list[Finding], Incident | None]:
    before = app.findings()
    app.commit(f"inject {f.name}", *f.touches)
    new = new_findings(before, app.findings(f))
    if not new:
        return new, None
    return new, incident_of(app.repo.path, new, time.time(), app.live(f))


# -- live symptoms ----------------------------------------------------------------------------


def workload(snapshot: Snapshot, name: str) -> Obj:
    obj = next((o for o in snapshot.of_kind("Deployment") if o.name == name), None)
    assert obj is not None, name
    return obj


def pod_of(wl: Obj, statuses: list[dict[str, Any]], phase: str = "Running") -> Obj:
    template = wl.body["spec"]["template"]
    name = f"{wl.name}-7d9f8c6b5-x2x9q"
    meta = {
        "name": name,
        "namespace": wl.namespace,
        "labels": dict(template["metadata"].get("labels", {})),
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{wl.name}-7d9f8c6b5",
                "controller": True,
            }
        ],
    }
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template["spec"],
        "status": {"phase": phase, "containerStatuses": statuses},
    }
    return Obj(Resource("Pod", wl.namespace, name), body)


def image_pull(deployment: str, container: str) -> LiveFn:
    def live(snapshot: Snapshot) -> list[Obj]:
        wl = workload(snapshot, deployment)
        waiting = {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}
        status = {
            "name": container,
            "ready": False,
            "restartCount": 0,
            "image": "x",
            "state": {"waiting": waiting},
        }
        return [pod_of(wl, [status], "Pending")]

    return live


def crashloop(deployment: str, container: str, reason: str = "Error") -> LiveFn:
    def live(snapshot: Snapshot) -> list[Obj]:
        wl = workload(snapshot, deployment)
        code = 137 if reason == "OOMKilled" else 1
        status = {
            "name": container,
            "ready": False,
            "restartCount": 6,
            "image": "x",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
            "lastState": {"terminated": {"reason": reason, "exitCode": code}},
        }
        return [pod_of(wl, [status])]

    return live
