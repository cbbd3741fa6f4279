"""Flux's kustomize-helm monorepo: a fault in an environment's values patch is undone there.

fluxcd/flux2-kustomize-helm-example keeps one HelmRelease in ``apps/base/podinfo``
and a kustomize overlay per environment whose patch sets that environment's
``spec.values``. Rendering stays in this repository, so the team has vendored
podinfo's chart (``charts/podinfo``, from a GitRepository) and keeps the
staging values it runs with in staging's patch. The example runs each
environment in a cluster of its own; the sim runs both in one, so each app
names its namespace. A bad change to staging's patch is undone by
``gitmedic run --cluster sim --forge local --once`` in one hunk of that patch;
the base release and production's patch stay as they were.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import CHART_WARNING, detectors_at, fixed_from_history, gitmedic, one_hunk

FLUX = DATA / "gitops-repos/flux2-kustomize-helm-example"
CHART = DATA / "gitops-repos/podinfo/charts/podinfo"
BASE = "apps/base/podinfo/release.yaml"
STAGING = "apps/staging/podinfo-values.yaml"
PRODUCTION = "apps/production/podinfo-values.yaml"
CONFIG = """version: 1
apps:
  - {name: staging, deployed_by: {file: apps/staging}, namespace: podinfo-staging}
  - {name: production, deployed_by: {file: apps/production}, namespace: podinfo-production}
"""
STAGING_VALUES = """    image:
      tag: 6.14.1
    backend: http://podinfo:9898/echo
    resources:
      limits:
        memory: 128Mi
      requests:
        memory: 32Mi
    nodeSelector: {}
    probes:
      liveness:
        periodSeconds: 10
"""
FAULTS = {
    "memory-limit-too-small": ("memory: 128Mi", "memory: 1Mi"),
    "request-too-large": ("memory: 32Mi", "memory: 200Gi"),
    "bad-image": ("tag: 6.14.1", "tag: 0.0.0-missing"),
    "nonexistent-node": ("nodeSelector: {}", "nodeSelector: {kubernetes.io/hostname: extra-node}"),
    "env-wrong-port": ("http://podinfo:9898/echo", "http://podinfo:8080/echo"),
    "liveness-probe-aggressive": ("periodSeconds: 10", "periodSeconds: 1"),
}
CASES = sorted(FAULTS)


def flux_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FLUX / "apps", repo / "apps")
    shutil.copytree(CHART, repo / "charts/podinfo")
    base = repo / BASE
    vendored = base.read_text().replace("chart: podinfo\n", "chart: ./charts/podinfo\n")
    base.write_text(vendored.replace("kind: HelmRepository", "kind: GitRepository"))
    staging = repo / STAGING
    write(repo, {STAGING: staging.read_text() + STAGING_VALUES, ".gitmedic/config.yaml": CONFIG})
    init_repo(repo)
    commit_all(repo, "podinfo: chart vendored, staging values in its patch")
    return repo


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_detect_on_each_environment_names_the_patch_line(tmp_path: Path) -> None:
    repo = flux_repo(tmp_path)
    patch = repo / STAGING
    text = patch.read_text().replace("memory: 128Mi", "memory: 1Mi")
    patch.write_text(text.replace(*FAULTS["env-wrong-port"]))
    lines = patch.read_text().splitlines()
    memory = 1 + lines.index("        memory: 1Mi")
    backend = 1 + lines.index("    backend: http://podinfo:8080/echo")
    found = gitmedic("detect", repo / "charts/podinfo", "--namespace", "podinfo-staging")
    assert f"set by resources.limits.memory at {STAGING}:{memory}" in found.out, found.out
    # the env finding at the value of the variable it names, not at the container's first
    assert f"set by backend at {STAGING}:{backend}" in found.out, found.out
    other = gitmedic("detect", repo / "charts/podinfo", "--namespace", "podinfo-production")
    assert "memory-limit-too-small" not in other.out, other.out


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("fault", CASES)
def test_a_fault_in_staging_s_values_patch_is_undone_in_that_patch(
    tmp_path: Path, fault: str
) -> None:
    repo = flux_repo(tmp_path)
    good = git(repo, "rev-parse", "HEAD")
    old, new = FAULTS[fault]
    patch = repo / STAGING
    original = patch.read_text()
    assert original.count(old) == 1
    patch.write_text(original.replace(old, new))
    bad = commit_all(repo, f"staging: {fault}")

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    fixed_from_history(run, left=frozenset({CHART_WARNING}))
    assert patch.read_text() == original  # the original value, back in the file that changed
    changed = git(repo, "diff", "--name-only", bad, "main", "--", ".", ":!.gitmedic")
    assert changed.splitlines() == [STAGING]  # the base release and production untouched
    assert one_hunk(repo, bad, STAGING)
    chart = repo / "charts/podinfo"
    left = detectors_at(chart, "main", "podinfo-staging")
    # as before the fault: the chart's warning, and (info) no schema for the HTTPRoute
    assert left == detectors_at(chart, good, "podinfo-staging") == {CHART_WARNING, "schema-invalid"}
