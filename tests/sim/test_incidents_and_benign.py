"""Commits as the benchmark shapes them: benign changes, two faults, two commits, noisy fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.clock import FakeClock
from gitmedic.sim.engine import GitSource
from gitmedic.sim.faults import BENIGN, benign
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.faults.incidents import commits, fault, one_commit
from gitmedic.sim.history import baseline_catalog
from gitmedic.sim.runtime import Sim, SimState
from tests.sim.faultcase import copy_app


def _run(path: Path, namespace: str, seconds: float = 660) -> SimState:
    snap = load_desired(path, namespace=namespace).snapshot
    catalog = baseline_catalog(path, None, namespace=namespace, current=snap)
    sim = Sim(GitSource(path, namespace), catalog, FakeClock(), namespace=namespace)
    return sim.run(seconds, step_s=60)


def _findings(state: SimState) -> set[str]:
    found = run_detectors(builtin_registry(), state.observed.snapshot).findings
    return {f.fingerprint for f in found}


@pytest.mark.parametrize("change", ["scale-up", "new-label", "comment"])
def test_benign_change_stays_healthy_and_adds_no_finding(change: str, tmp_path: Path) -> None:
    root, path, ns = copy_app("online-boutique", tmp_path)
    init_repo(root)
    before = _run(path, ns)

    BENIGN[change](root, load_desired(path, namespace=ns).snapshot)
    commit_all(root, change)
    after = _run(path, ns)

    assert all(p.ready for p in after.observed.pods)
    assert after.application["status"]["health"]["status"] == "Healthy"
    assert _findings(after) <= _findings(before)
    assert after.alerts == []


def test_image_bump_to_a_tag_that_ran_before_is_benign(tmp_path: Path) -> None:
    root, path, ns = copy_app("online-boutique", tmp_path)
    init_repo(root)
    snap = load_desired(path, namespace=ns).snapshot
    frontend = next(w for w in snap.workloads() if w.obj.name == "frontend")
    current = str(frontend.containers(init=False)[0].body["image"])
    older = current.rsplit(":", 1)[0] + ":v0.9.0"
    benign.image_bump_known(root, snap, target="frontend", image=older)
    commit_all(root, "run an older frontend")  # history: the older tag ran ...
    benign.image_bump_known(
        root, load_desired(path, namespace=ns).snapshot, target="frontend", image=current
    )
    commit_all(root, "upgrade frontend")  # ... then the current one

    benign.image_bump_known(
        root, load_desired(path, namespace=ns).snapshot, target="frontend", image=older
    )
    commit_all(root, "roll frontend back to a tag that ran before")

    assert all(p.ready for p in _run(path, ns).observed.pods)


def test_two_faults_in_one_commit_show_both(tmp_path: Path) -> None:
    root, path, ns = copy_app("online-boutique", tmp_path)
    init_repo(root)

    done = one_commit(
        root,
        path,
        ns,
        [
            fault("bad-image", target="cartservice"),
            fault("service-selector-mismatch", target="adservice"),
        ],
        "two",
    )
    state = _run(path, ns)

    assert [i.fault for i in done.injections] == ["bad-image", "service-selector-mismatch"]
    assert _waiting(state, "ImagePullBackOff")
    assert "service-selector-unmatched" in {
        f.detector for f in run_detectors(builtin_registry(), state.observed.snapshot).findings
    }


def test_two_faults_in_two_commits_and_a_fault_riding_with_harmless_changes(tmp_path: Path) -> None:
    root, path, ns = copy_app("online-boutique", tmp_path)
    init_repo(root)

    first, second = commits(
        root,
        path,
        ns,
        [
            fault("memory-limit-too-small", target="emailservice"),
            fault("env-wrong-port", target="checkoutservice"),
        ],
    )
    noisy = one_commit(
        root,
        path,
        ns,
        [BENIGN["new-label"], fault("readiness-probe-wrong", target="adservice")],
        "label + probe",
    )
    state = _run(path, ns)

    assert first.sha != second.sha != noisy.sha
    assert _waiting(state, "CrashLoopBackOff")
    assert state.traffic.entrypoints["boutique/frontend-external"].success_rate < 1.0
    assert [i.fault for i in noisy.injections] == ["new-label", "readiness-probe-wrong"]


def _waiting(state: SimState, reason: str) -> bool:
    return any(
        cs.get("state", {}).get("waiting", {}).get("reason") == reason
        for p in state.observed.pods
        for cs in p.body["status"].get("containerStatuses", [])
    )
