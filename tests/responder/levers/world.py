"""online-boutique in a git repo, deployed by the sim, with a runtime fault injected: the
live finding a lever answers, and the :class:`Evidence` the responder would give it."""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.responder.levers import Bounds, Evidence
from gitmedic.bot.responder.states import DesiredStates
from gitmedic.bot.responder.workspace import Workspace
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.sim.faults.demand import inject_named
from gitmedic.sim.faults.git import commit_all
from tests.bot.run_world import app_repo

MANIFEST = "kubernetes-manifests.yaml"
RECENT_S = 3 * 86400.0


@dataclass
class World:
    repo: Path
    app: str
    namespace: str
    cluster: SimCluster

    @property
    def manifest(self) -> Path:
        return self.repo / self.app / MANIFEST

    def finding(self, detector: str, rule: str, resource: str) -> Finding:
        live = run_detectors(builtin_registry(), self.cluster.snapshot()).findings
        found = [
            f for f in live if (f.detector, f.rule, f.resource.name) == (detector, rule, resource)
        ]
        assert found, [f"{f.detector}/{f.rule} {f.resource.name}" for f in live]
        return found[0]

    def evidence(self, finding: Finding, bounds: Bounds | None = None) -> Evidence:
        repo = ManifestRepo(self.repo, self.app, self.namespace)
        live = self.cluster.snapshot()
        states = DesiredStates(repo, builtin_registry(), list(live.of_kind("Node")))
        ws = Workspace(repo, states, repo.git.rev_parse("HEAD"))
        at = self.cluster.clock.now()
        return Evidence(ws, finding, live, time.time() - RECENT_S, at, bounds or Bounds())


def changed_lines(before: str, after: str) -> list[str]:
    """The lines a change removed (``-``) and added (``+``), in order, no context."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def boutique(tmp: Path) -> tuple[Path, str, str]:
    return app_repo(tmp, "online-boutique")


def edit_workload(repo: Path, app: str, name: str, old: str, new: str, message: str) -> str:
    """Replace ``old`` by ``new`` once inside Deployment ``name`` and commit."""
    manifest = repo / app / MANIFEST
    text = manifest.read_text()
    start = text.index(f"  name: {name}\n  labels:\n    app: {name}\nspec:\n  selector")
    at = text.index(old, start)
    manifest.write_text(text[:at] + new + text[at + len(old) :])
    return commit_all(repo, message)


def debug_env(repo: Path, app: str, name: str) -> str:
    """A harmless commit: one more env var on the workload's first container."""
    env = "        env:\n"
    extra = "        - name: LOG_LEVEL\n          value: debug\n"
    return edit_workload(repo, app, name, env, env + extra, f"{name}: debug logging")


def running(repo: Path, app: str, namespace: str, faults: str, settle_s: float = 180.0) -> World:
    cluster = SimCluster(repo, app, namespace)
    inject_named(cluster.sim, faults)
    cluster.sim.run(settle_s)
    return World(repo, app, namespace, cluster)
