"""A GitOps engine stand-in: an Argo CD Application whose status moves as a real one does.

It performs one reconciliation per :meth:`Engine.step` (gitops-engine style),
exposing its state as the Application object: when the tracked branch's head
differs from the synced revision the app is ``OutOfSync``; after
``sync_delay_s`` (Argo's polling / webhook latency) an operation starts
(``operationState.phase: Running``), and ``sync_duration_s`` later it succeeds,
applying that revision to the cluster (``Succeeded``, ``syncResult.revision``,
``sync.status: Synced``). ``health.status`` is the worst health of the managed
objects as observed. Injectable failures: a sync that fails (``Failed``,
cluster untouched), a sync that is slow, and health stuck at ``Progressing``.
A revision whose manifests do not load makes the operation ``Error``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.clock import Clock
from gitmedic.sim.branch_head import HEADS
from gitmedic.sim.cluster import Cluster
from gitmedic.sim.health import Status, health_of, worst
from gitmedic.sim.stamps import iso

APP_NAMESPACE = "argocd"


class SyncFailure(enum.Enum):
    NONE = "none"
    SYNC_ERROR = "sync-error"
    STUCK_PROGRESSING = "stuck-progressing"
    SLOW_SYNC = "slow-sync"


class RevisionSource(Protocol):
    def head(self) -> str: ...
    def desired(self, revision: str) -> Snapshot: ...


class ManifestLoadError(Exception):
    """The manifests at a revision do not load."""


@dataclass(frozen=True)
class EngineConfig:
    sync_delay_s: float = 3.0
    sync_duration_s: float = 2.0
    slow_sync_s: float = 180.0
    failure: SyncFailure = SyncFailure.NONE


@dataclass
class _Operation:
    revision: str
    started: float
    finishes: float
    phase: str = "Running"
    message: str = "waiting for completion of hook and 0 more resources"
    finished: float | None = None


@dataclass
class Engine:
    source: RevisionSource
    cluster: Cluster
    clock: Clock
    name: str = "app"
    repo_url: str = "file:///repo"
    path: str = "."
    namespace: str = "default"
    config: EngineConfig = field(default_factory=EngineConfig)
    synced: str = ""
    operation: _Operation | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    reconciled: float = 0.0
    _seen: dict[str, float] = field(default_factory=dict)

    def step(self) -> None:
        now = self.clock.now()
        self.reconciled = now
        head = self.source.head()
        self._seen.setdefault(head, now)
        op = self.operation
        if op is not None and op.phase == "Running":
            if now >= op.finishes:
                self._finish(op, now)
            return
        failed_here = op is not None and op.revision == head and op.phase != "Succeeded"
        if (
            head != self.synced
            and not failed_here
            and now >= self._seen[head] + self.config.sync_delay_s
        ):
            took = (
                self.config.slow_sync_s
                if self.config.failure is SyncFailure.SLOW_SYNC
                else self.config.sync_duration_s
            )
            self.operation = _Operation(head, now, now + took)

    def _finish(self, op: _Operation, now: float) -> None:
        op.finished = now
        if self.config.failure is SyncFailure.SYNC_ERROR:
            op.phase, op.message = (
                "Failed",
                "one or more objects failed to apply, reason: admission webhook denied the request",
            )
            return
        try:
            desired = self.source.desired(op.revision)
        except ManifestLoadError as exc:
            op.phase, op.message = (
                "Error",
                f"rpc error: code = Unknown desc = Manifest generation error: {exc}",
            )
            return
        self.cluster.apply(desired, op.revision)
        self.synced = op.revision
        op.phase, op.message = "Succeeded", "successfully synced (all tasks run)"
        self.history.append(
            {
                "id": len(self.history),
                "revision": op.revision,
                "deployStartedAt": iso(op.started),
                "deployedAt": iso(now),
                "source": self._source(),
            }
        )

    def application(self) -> dict[str, Any]:
        head = self.source.head()
        status: dict[str, Any] = {
            "sync": {
                "status": "Synced" if self.synced == head else "OutOfSync",
                "revision": head,
                "comparedTo": {"source": self._source(), "destination": self._destination()},
            },
            "health": self._health(),
            "reconciledAt": iso(self.reconciled),
            "sourceType": "Directory",
            "controllerNamespace": APP_NAMESPACE,
            "resources": self._resources(),
            "summary": {
                "images": sorted(
                    {
                        str(c.body.get("image"))
                        for w in self.cluster.desired.workloads()
                        for c in w.containers()
                        if c.body.get("image")
                    }
                )
            },
        }
        if self.history:
            status["history"] = list(self.history[-10:])
        if self.operation is not None:
            status["operationState"] = self._operation_state(self.operation)
        return {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {
                "name": self.name,
                "namespace": APP_NAMESPACE,
                "finalizers": ["resources-finalizer.argocd.argoproj.io"],
            },
            "spec": {
                "project": "default",
                "source": self._source(),
                "destination": self._destination(),
                "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
            },
            "status": status,
        }

    def _health(self) -> dict[str, str]:
        op = self.operation
        if self.config.failure is SyncFailure.STUCK_PROGRESSING and op is not None:
            return {"status": Status.PROGRESSING.value}
        statuses = [s for s, _ in self._resource_health()]
        return {"status": worst(statuses).value}

    def _resource_health(self) -> list[tuple[Status, dict[str, Any]]]:
        managed = {(o.kind, o.namespace, o.name) for o in self.cluster.desired}
        out = []
        for body in self.cluster.observe().objects:
            meta = body.get("metadata") or {}
            if (body.get("kind"), meta.get("namespace", ""), meta.get("name")) in managed:
                out.append((health_of(body)[0], body))
        return out

    def _resources(self) -> list[dict[str, Any]]:
        out = []
        for status, body in self._resource_health():
            group, _, version = str(body["apiVersion"]).rpartition("/")
            entry = {
                "kind": body["kind"],
                "name": body["metadata"]["name"],
                "version": version,
                "status": "Synced",
                "health": {"status": status.value},
            }
            if group:
                entry["group"] = group
            if body["metadata"].get("namespace"):
                entry["namespace"] = body["metadata"]["namespace"]
            out.append(entry)
        return out

    def _operation_state(self, op: _Operation) -> dict[str, Any]:
        state: dict[str, Any] = {
            "operation": {
                "sync": {"revision": op.revision},
                "initiatedBy": {"automated": True},
                "retry": {"limit": 5},
            },
            "phase": op.phase,
            "message": op.message,
            "startedAt": iso(op.started),
        }
        if op.finished is not None:
            state["finishedAt"] = iso(op.finished)
            state["syncResult"] = {
                "revision": op.revision,
                "source": self._source(),
                "resources": [],
            }
        return state

    def _source(self) -> dict[str, str]:
        return {"repoURL": self.repo_url, "path": self.path, "targetRevision": "main"}

    def _destination(self) -> dict[str, str]:
        return {"server": "https://kubernetes.default.svc", "namespace": self.namespace}


@dataclass
class StaticSource:
    """One fixed desired state (a folder that is not a git repo)."""

    snapshot: Snapshot
    revision: str = "working-tree"

    def head(self) -> str:
        return self.revision

    def desired(self, revision: str) -> Snapshot:
        return self.snapshot


@dataclass
class GitSource:
    """A path in a git repo, tracking a branch: the one named, else the repository's
    ``main``, else its ``master`` (a GitOps engine tracks the default branch, and many
    repositories still call it master), else the branch checked out."""

    path: Path
    namespace: str = "default"
    branch: str | None = None
    deployer: str = ""  # the app is this release at ``path`` (AppConfig.deployer)

    def head(self) -> str:
        """The tracked branch's commit; git is asked again only when a ref file changed
        (:mod:`gitmedic.sim.branch_head`: every step of every app's sim reads it)."""
        candidates = (self.branch,) if self.branch else ("main", "master")
        return HEADS.read(self._dir(), candidates, self._ask_head)

    def _ask_head(self) -> str:
        branch = self.branch or self._default_branch()
        proc = gitcmd.run(self._dir(), "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
        if proc.returncode != 0:
            raise ManifestLoadError(f"{self.path}: no branch {branch} to deploy")
        return proc.stdout.strip()

    def _default_branch(self) -> str:
        for candidate in ("main", "master"):
            ref = f"refs/heads/{candidate}"
            if gitcmd.run(self._dir(), "rev-parse", "--verify", "--quiet", ref).returncode == 0:
                return candidate
        proc = gitcmd.run(self._dir(), "symbolic-ref", "--quiet", "--short", "HEAD")
        return proc.stdout.strip() if proc.returncode == 0 else "main"

    def desired(self, revision: str) -> Snapshot:
        from gitmedic.reconciler.manifests.load import LoadFailure, load_desired

        try:
            state = load_desired(
                self.path, rev=revision, namespace=self.namespace, deployer=self.deployer
            )
        except LoadFailure as exc:
            raise ManifestLoadError(str(exc)) from None
        if state.errors:
            first = state.errors[0]
            raise ManifestLoadError(f"{first.file}:{first.line}: {first.message}")
        return state.snapshot

    def _dir(self) -> Path:
        return self.path if self.path.is_dir() else self.path.parent


@dataclass
class MemorySource:
    """Revisions held in memory; ``head`` moves when a test (or the demo) pushes."""

    revisions: dict[str, Snapshot]
    head_revision: str

    def head(self) -> str:
        return self.head_revision

    def push(self, revision: str, snapshot: Snapshot) -> None:
        self.revisions[revision] = snapshot
        self.head_revision = revision

    def desired(self, revision: str) -> Snapshot:
        return self.revisions[revision]
