"""A fault injected through a Helm values change is undone in that values file.

podinfo's chart deploys two environments as teams keep them: production with
``values-prod.yaml``, staging with its own ``values-staging.yaml``, both over
the chart's ``values.yaml``. A bad change to the production values is what
``gitmedic run --cluster sim --forge local --once`` must undo: one hunk of
``values-prod.yaml`` back to the original value, the chart's templates, its
shared ``values.yaml`` and the staging values untouched.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import gitmedic

PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
PROD = "charts/podinfo/values-prod.yaml"
STAGING = "charts/podinfo/values-staging.yaml"
# podinfo's chart takes every pod down on a rollout of one replica (maxUnavailable: 1 in
# its template): a known finding this team has accepted, so it is no incident of its own
CONFIG = """version: 1
detectors: {exclude: [rollout-strategy-unsafe]}
apps:
  - name: podinfo-prod
    path: charts/podinfo
    namespace: prod
    helm: {values: [values-prod.yaml], release: podinfo}
  - name: podinfo-staging
    path: charts/podinfo
    namespace: staging
    helm: {values: [values-staging.yaml], release: podinfo}
"""
STAGING_VALUES = """# Staging: one small replica.
replicaCount: 1
resources:
  limits:
    memory: 128Mi
  requests:
    cpu: 10m
    memory: 32Mi
"""
# fault -> (old, new) in values-prod.yaml, each a single-line change
FAULTS = {
    "memory-limit-too-small": ("  limits:\n    memory: 256Mi\n", "  limits:\n    memory: 1Mi\n"),
    "request-too-large": (
        "    cpu: 100m\n    memory: 64Mi\n",
        "    cpu: 100m\n    memory: 200Gi\n",
    ),
    "bad-image": ("  tag: 6.14.1\n", "  tag: 0.0.0-missing\n"),
    "nonexistent-node": (
        "nodeSelector: {}\n",
        "nodeSelector: {kubernetes.io/hostname: extra-node}\n",
    ),
}


def chart_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    write(repo, {STAGING: STAGING_VALUES, ".gitmedic/config.yaml": CONFIG})
    init_repo(repo)
    commit_all(repo, "podinfo: production and staging values")
    return repo


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_in_the_production_values_is_undone_in_that_file(
    tmp_path: Path, fault: str
) -> None:
    repo = chart_repo(tmp_path)
    old, new = FAULTS[fault]
    prod = repo / PROD
    original = prod.read_text()
    assert original.count(old) == 1
    prod.write_text(original.replace(old, new))
    bad = commit_all(repo, f"prod: {fault}")

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    assert run.rc == 0, run.err[-3000:]
    fixes = [
        t for i in run.json()["incidents"] for t in i["transactions"] if t["status"] == "committed"
    ]
    assert len(fixes) == 1 and fixes[0]["strategy"] == "bisect", run.out
    assert prod.read_text() == original  # the original value, back in the file that changed
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "charts").splitlines()
    assert changed == [PROD]  # templates, the chart's values.yaml and staging untouched
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "-U0", bad, "main", "--", PROD],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert diff.count("\n@@ ") == 1  # one hunk
