"""Running one fault of the library against a real app in the sim (shared by the tests)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.clock import FakeClock
from gitmedic.sim.engine import MemorySource
from gitmedic.sim.faults import ManifestFault
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.faults.targets import Injection
from gitmedic.sim.runtime import Sim, SimState
from tests.sim.helpers import app

SETTLE_S = 660.0  # past the Deployment progress deadline (600 s)


@dataclass
class Outcome:
    before: SimState
    after: SimState
    injection: Injection
    fired: set[str]


def copy_app(name: str, tmp: Path) -> tuple[Path, Path, str]:
    """(repo root, manifest path inside it, namespace) of a private copy of a real app."""
    a = app(name)
    app_root = a.path
    while app_root.parent.name != "apps":
        app_root = app_root.parent
    root = tmp / name
    shutil.copytree(app_root, root)
    return root, root / a.path.relative_to(app_root), a.namespace


def run_fault(fault: ManifestFault, name: str, tmp: Path) -> Outcome:
    root, path, namespace = copy_app(name, tmp)
    init_repo(root)
    baseline = load_desired(path, namespace=namespace).snapshot
    source = MemorySource({"base": baseline}, "base")
    sim = Sim(source, ImageCatalog.from_snapshots([baseline]), FakeClock(), namespace=namespace)
    before = sim.run(420, step_s=60)
    injection = fault.inject(root, baseline)
    commit_all(root, f"inject {fault.id}")
    faulty = load_desired(path, namespace=namespace)
    assert not faulty.errors, faulty.errors
    source.push("fault", faulty.snapshot)
    if fault.symptom == "rollout-outage":
        source.push("rollout", _bumped(root, path, namespace, injection))
        after = sim.run(5, step_s=1)  # observed as the rollout is applied (+5 s)
    else:
        after = sim.run(SETTLE_S, step_s=60)
    live = run_detectors(builtin_registry(), after.observed.snapshot)
    return Outcome(before, after, injection, {f.detector for f in live.findings})


def _bumped(root: Path, path: Path, namespace: str, injection: Injection) -> object:
    """After an unsafe strategy: any rollout (a new annotation) takes the service down."""
    from gitmedic.sim.faults import benign

    snap = load_desired(path, namespace=namespace).snapshot
    benign.new_label(root, snap, target=injection.target.name)
    from gitmedic.sim.faults import edit

    wl = load_desired(path, namespace=namespace).snapshot.get(
        "Deployment", namespace, injection.target.name
    )
    assert wl is not None
    edit.edit(
        root,
        wl,
        lambda doc: (
            doc["spec"]["template"]["metadata"]
            .setdefault("annotations", {})
            .__setitem__("restartedAt", "now")
        ),
    )
    return load_desired(path, namespace=namespace).snapshot
