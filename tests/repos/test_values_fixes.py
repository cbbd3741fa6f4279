"""A fault injected through a Helm values change is undone in that values file.

podinfo's chart deploys two environments as teams keep them: production with
``values-prod.yaml``, staging with its own ``values-staging.yaml``, both over
the chart's ``values.yaml``. A bad change to the production values is what
``gitmedic run --cluster sim --forge local --once`` must undo: one hunk of
``values-prod.yaml`` back to the original value, the chart's templates, its
shared ``values.yaml`` and the staging values untouched. The chart's own warning
(every rollout may take its one pod down: maxUnavailable 1 in a template) is
there before the fault and after the fix, and never stops the fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import CHART_WARNING, detectors_at, fixed_from_history, gitmedic, one_hunk

PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
PROD = "charts/podinfo/values-prod.yaml"
STAGING = "charts/podinfo/values-staging.yaml"
CONFIG = """version: 1
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
    "liveness-probe-aggressive": (
        "  liveness:\n    initialDelaySeconds: 1\n    timeoutSeconds: 5\n    failureThreshold: 3\n"
        "    successThreshold: 1\n    periodSeconds: 10\n",
        "  liveness:\n    initialDelaySeconds: 1\n    timeoutSeconds: 5\n    failureThreshold: 3\n"
        "    successThreshold: 1\n    periodSeconds: 1\n",
    ),
    "env-wrong-port": (
        "backend: http://podinfo:9898/echo\n",
        "backend: http://podinfo:8080/echo\n",
    ),
}
# production calls its own Service as its backend (the chart's commented-out example, set)
BACKEND = ("backend: #http://backend-podinfo:9898/echo\n", "backend: http://podinfo:9898/echo\n")


def chart_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    prod = repo / PROD
    prod.write_text(prod.read_text().replace(*BACKEND))
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
    good = git(repo, "rev-parse", "HEAD")
    old, new = FAULTS[fault]
    prod = repo / PROD
    original = prod.read_text()
    assert original.count(old) == 1
    prod.write_text(original.replace(old, new))
    bad = commit_all(repo, f"prod: {fault}")

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    fixed_from_history(run, left=frozenset({CHART_WARNING}))
    assert prod.read_text() == original  # the original value, back in the file that changed
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "charts").splitlines()
    assert changed == [PROD]  # templates, the chart's values.yaml and staging untouched
    assert one_hunk(repo, bad, PROD)
    # the chart's own warning is all that is left, as it was before the fault
    chart = repo / "charts/podinfo"
    assert (
        detectors_at(chart, "main", "prod") == detectors_at(chart, good, "prod") == {CHART_WARNING}
    )


ARGO_APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: podinfo-prod, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://git.example.com/team/gitops.git
    path: charts/podinfo
    helm: {releaseName: podinfo, valueFiles: [values-prod.yaml]}
  destination: {server: https://kubernetes.default.svc, namespace: prod}
"""
FLUX_RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: flux-system
spec:
  interval: 10m
  targetNamespace: staging
  chart:
    spec:
      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: flux-system
  values:
    resources:
      limits:
        memory: 128Mi
"""
DEPLOYED_BY = """version: 1
apps:
  - name: podinfo
    deployed_by: {file: %s}
"""


def run_and_check(repo: Path, changed: str, original: str, bad: str) -> None:
    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    fixed_from_history(run, left=frozenset({CHART_WARNING}))
    assert (repo / changed).read_text() == original
    outside_memory = git(repo, "diff", "--name-only", bad, "main", "--", ".", ":!.gitmedic")
    assert outside_memory.splitlines() == [changed]  # the chart and other files untouched
    assert one_hunk(repo, bad, changed)


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_an_app_read_from_its_argo_application_is_fixed_in_its_values_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    config = DEPLOYED_BY % "argocd/podinfo-prod.yaml"
    write(repo, {"argocd/podinfo-prod.yaml": ARGO_APP, ".gitmedic/config.yaml": config})
    init_repo(repo)
    commit_all(repo, "podinfo deployed by Argo CD")
    prod = repo / PROD
    original = prod.read_text()
    old, new = FAULTS["memory-limit-too-small"]
    prod.write_text(original.replace(old, new))
    bad = commit_all(repo, "prod: tighter memory")
    detect = gitmedic("detect", repo / "charts/podinfo", "--format", "json")
    found = {(f["detector"], f["resource"]["namespace"]) for f in detect.json()["findings"]}
    assert ("memory-limit-too-small", "prod") in found, detect.out  # Argo's namespace
    run_and_check(repo, PROD, original, bad)


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_fault_in_a_helmrelease_s_inline_values_is_undone_there(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    release = "apps/staging/podinfo.yaml"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    write(repo, {release: FLUX_RELEASE, ".gitmedic/config.yaml": DEPLOYED_BY % release})
    init_repo(repo)
    commit_all(repo, "podinfo deployed by Flux")
    detect = gitmedic("detect", repo / "charts/podinfo")
    assert "memory-limit" not in detect.out, detect.out
    file = repo / release
    file.write_text(FLUX_RELEASE.replace("memory: 128Mi", "memory: 1Mi"))
    bad = commit_all(repo, "staging: tighter memory")
    detect = gitmedic("detect", repo / "charts/podinfo")
    assert "Deployment/staging/staging-podinfo" in detect.out  # Flux names the release, detect.out
    assert f"set by resources.limits.memory at {release}:18" in detect.out, detect.out
    run_and_check(repo, release, FLUX_RELEASE, bad)
