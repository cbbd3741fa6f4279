"""Running one fault of the library against a real app in the sim (shared by the tests)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.engine import MemorySource
from gitmedic.sim.faults import ManifestFault
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.faults.targets import Injection
from gitmedic.sim.runtime import Sim, SimState
from gitmedic.sim.stamps import EPOCH
from tests.sim.helpers import app

SETTLE_S = 660.0  # after the sync: past the progress deadline and init-stuck age (600 s)


@dataclass
class Outcome:
    before: SimState
    after: SimState
    injection: Injection
    fired: set[str]  # "detector/rule" of the live findings that are new since `before`
    # the fault's baseline extension, committed before the baseline the sim deploys (None:
    # the app ships the object), and the desired-state findings it added to the app's
    extension: Injection | None = None
    extension_fired: set[str] = field(default_factory=set)


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
    extension, extension_fired = _extend(fault, root, path, namespace, baseline)
    if extension is not None:
        baseline = load_desired(path, namespace=namespace).snapshot
    source = MemorySource({"base": baseline}, "base")
    sim = Sim(
        source, ImageCatalog.from_snapshots([baseline]), FakeClock(EPOCH), namespace=namespace
    )
    before = sim.run(420, step_s=60)
    injection = fault.inject(root, baseline)
    commit_all(root, f"inject {fault.id}")
    if fault.symptom == "rollout-outage":
        _synced(sim, source, "fault", path, namespace, apply=False)
        source.push("rollout", _bumped(root, path, namespace, injection))
        after = sim.run(5, step_s=1)  # observed as the rollout is applied (+5 s)
    else:
        _synced(sim, source, "fault", path, namespace)
        after = sim.run(SETTLE_S, step_s=60)
    fired = new_findings(before, after)
    return Outcome(before, after, injection, fired, extension, extension_fired)


def _extend(
    fault: ManifestFault, root: Path, path: Path, namespace: str, shipped: Snapshot
) -> tuple[Injection | None, set[str]]:
    """Commit the fault's baseline extension where the app lacks the object it breaks.

    The sim then deploys the extended commit as the baseline, as it deploys astronomy's
    own ConfigMaps: it fixes a revision's fate when the revision is applied, so a
    ConfigMap deleted after the revision that mounts it rolled out would fail that
    revision retroactively and leave the previous ReplicaSet serving, which no cluster
    does. Returns the extension and the desired-state findings it added (none, if benign).
    """
    extension = fault.baseline(root, shipped) if fault.baseline is not None else None
    if extension is None:
        return None, set()
    commit_all(root, f"baseline for {fault.id}: {extension.detail}")
    loaded = load_desired(path, namespace=namespace)
    assert not loaded.errors, loaded.errors
    registry = builtin_registry()
    old = {f.fingerprint for f in run_detectors(registry, shipped).findings}
    new = run_detectors(registry, loaded.snapshot).findings
    return extension, {f"{f.detector}/{f.rule}" for f in new if f.fingerprint not in old}


def _synced(
    sim: Sim, source: MemorySource, revision: str, path: Path, namespace: str, *, apply: bool = True
) -> Snapshot:
    """Load the committed manifests, push them as ``revision`` and (with ``apply``) wait
    until the sim's engine has applied them."""
    loaded = load_desired(path, namespace=namespace)
    assert not loaded.errors, loaded.errors
    source.push(revision, loaded.snapshot)
    if apply:
        _until_applied(sim, revision)
    return loaded.snapshot


def _until_applied(sim: Sim, revision: str) -> None:
    """Step the sim until its engine has applied ``revision`` (the sync takes seconds)."""
    for _ in range(60):
        if sim.engine.synced == revision:
            return
        sim.run(1, step_s=1)
    raise AssertionError(f"the engine did not apply {revision} within a minute")


def new_findings(before: SimState, after: SimState) -> set[str]:
    """``detector/rule`` of the live findings on ``after`` that ``before`` did not have."""
    registry = builtin_registry()
    old = {f.fingerprint for f in run_detectors(registry, before.observed.snapshot).findings}
    live = run_detectors(registry, after.observed.snapshot).findings
    return {f"{f.detector}/{f.rule}" for f in live if f.fingerprint not in old}


def _bumped(root: Path, path: Path, namespace: str, injection: Injection) -> Snapshot:
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
