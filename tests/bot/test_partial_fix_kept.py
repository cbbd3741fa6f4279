"""A fix that clears its part of a two-fault commit is kept, through the real ``gitmedic run``.

One commit breaks a Service's selector and another workload's readiness probe.
The incident opens on the selector (the probe's workload is still within its
rollout deadline); the first candidate restores the selector. The app stays
unhealthy because of the probe, so the engine never reports it Healthy: the
sync wait used to time out ("not deployed after 600s") and undo a correct fix,
twice, then escalate. Now the sync ends when the engine applied the merge and
the window judges it (targets cleared, nothing worse): kept. The probe's
workload then fires on its own and is fixed too; main ends with the app's
objects as they were before the commit, and nothing was reverted.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.sim.faults.git import init_repo
from gitmedic.sim.faults.incidents import fault, one_commit
from tests.bot.cli_world import git, gitmedic, prs
from tests.conftest import APPS

pytestmark = pytest.mark.integration

FAULTS = ("service-selector-mismatch", "readiness-probe-wrong")
APPS_UNDER_TEST = {  # app -> (its one manifest file, namespace)
    "sock-shop": ("deploy/kubernetes/complete-demo.yaml", "sock-shop"),
    "teastore": ("examples/kubernetes/teastore-clusterip.yaml", "teastore"),
}


def _repo(tmp: Path, name: str) -> tuple[Path, str, str, str]:
    """(repo, app path, namespace, the manifest's path in the repo) at a healthy baseline."""
    manifest, namespace = APPS_UNDER_TEST[name]
    repo = tmp / "repo"
    target = repo / "apps" / name / Path(manifest).name
    target.parent.mkdir(parents=True)
    shutil.copy(APPS / name / manifest, target)
    init_repo(repo)
    return repo, f"apps/{name}", namespace, f"apps/{name}/{target.name}"


def _objects(repo: Path, rev: str, path: str) -> list[Any]:
    """The objects of every file under ``path`` at ``rev`` (the injector re-indents what it
    edits: compare data, not bytes)."""
    files = git(repo, "ls-tree", "-r", "--name-only", rev, "--", path).splitlines()
    texts = [git(repo, "show", f"{rev}:{file}") for file in files]
    return [d for text in texts for d in yaml.safe_load_all(text) if d]


@pytest.mark.parametrize("name", sorted(APPS_UNDER_TEST))
def test_both_faults_of_one_commit_are_fixed_and_nothing_is_reverted(
    tmp_path: Path, name: str
) -> None:
    repo, app, namespace, file = _repo(tmp_path, name)
    baseline = git(repo, "rev-parse", "HEAD")
    faults = [fault(f) for f in FAULTS]
    commit = one_commit(repo, repo / app, namespace, faults, "a selector and a probe")
    service, workload = (i.target for i in commit.injections)
    assert service.kind == "Service" and workload.kind == "Deployment"
    assert workload.name != service.name, "the probe is on another workload"

    argv: list[str | Path] = ["run", repo, "--path", app, "--namespace", namespace]
    done = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")

    assert done.rc == 0, done.err
    report = done.json()
    assert report["healthy"] is True
    txns = [t for incident in report["incidents"] for t in incident["transactions"]]
    assert 1 <= len(txns) <= 2 and all(t["status"] == "committed" for t in txns), txns
    assert not [pr for pr in prs(repo) if pr["branch"].startswith("revert-")]
    assert _objects(repo, "main", file) == _objects(repo, baseline, file)


def test_when_the_fix_uncovers_the_other_fault_the_retry_restores_both(tmp_path: Path) -> None:
    """hotel-reservation's consul: the selector of the Service and the probe of the very
    Deployment it fronts. Restoring the selector alone leaves the Service with no ready
    endpoint (caused, undone at once); the retry keeps it and restores the probe from the
    same commit (:mod:`gitmedic.bot.responder.uncovered`)."""
    repo, app = tmp_path / "repo", "apps/hotel-reservation"
    shutil.copytree(APPS / "hotel-reservation" / "kubernetes", repo / app)
    init_repo(repo)
    baseline = git(repo, "rev-parse", "HEAD")
    faults = [fault(f, target="consul") for f in FAULTS]
    one_commit(repo, repo / app, "hotel", faults, "consul: a selector and a probe")

    argv: list[str | Path] = ["run", repo, "--path", app, "--namespace", "hotel"]
    done = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")

    assert done.rc == 0, done.err
    report = done.json()
    assert report["healthy"] is True
    (incident,) = report["incidents"]
    statuses = [(t["status"], t["attempt"]) for t in incident["transactions"]]
    assert statuses == [("reverted", 1), ("committed", 2)]
    assert _objects(repo, "main", app) == _objects(repo, baseline, app)
