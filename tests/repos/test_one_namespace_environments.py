"""Two environments in one namespace: each evaluated and fixed on its own objects.

A team runs podinfo's dev and staging overlays in one namespace, ``team``, kept
apart as kustomize users do: a ``namePrefix`` per overlay (``dev-frontend``,
``staging-frontend``) and the environment label in every selector. Each overlay
has its own patches (the frontend's resources, probe and backend address; the
warm-cache job's address of its own frontend). A fault in one overlay's patch
is undone there by ``gitmedic run --cluster sim --forge local --once``; the
other overlay and the shared bases stay as they were, and a base fault is
fixed in the base only when the other environment has it too. Two overlays
that render the same objects into the namespace are a config error naming both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import fixed_from_history, gitmedic, one_hunk
from tests.repos.test_overlay_fixes import DEPLOY, HEALTHY

ENVS = ("dev", "staging")
CONFIG = """version: 1
apps:
  - {name: dev, path: deploy/overlays/dev, namespace: team}
  - {name: staging, path: deploy/overlays/staging, namespace: team}
"""
KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: team
namePrefix: {env}-
labels:
  - pairs:
      app.kubernetes.io/environment: {env}
    includeSelectors: true
resources:
  - ../../bases/backend
  - ../../bases/frontend
  - ../../bases/cache
  - ../../bases/database
patches:
  - path: frontend-patch.yaml
  - path: warm-cache-patch.yaml
"""
# the production patch of tests/repos/test_overlay_fixes.py, each environment's backend
FRONTEND = HEALTHY.replace("http://backend:", "http://{env}-backend:")
WARM_CACHE = """apiVersion: batch/v1
kind: CronJob
metadata:
  name: warm-cache
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
            - name: warm-cache-init
              env:
                - name: FRONTEND_URL
                  value: http://{env}-frontend
          containers:
            - name: warm-cache
              env:
                - name: FRONTEND_URL
                  value: http://{env}-frontend
"""
BASE = "deploy/bases/frontend/deployment.yaml"
IMAGE = "ghcr.io/stefanprodan/podinfo:6.14.1"
# (environment, patch file, old, new)
FAULTS = {
    "dev-memory-limit-too-small": ("dev", "frontend-patch", "memory: 256Mi", "memory: 1Mi"),
    "staging-env-wrong-port": ("staging", "frontend-patch", ":9898/echo", ":9899/echo"),
    "staging-liveness-probe-aggressive": (
        "staging",
        "frontend-patch",
        "periodSeconds: 10",
        "periodSeconds: 1",
    ),
}


def patch_of(env: str, name: str = "frontend-patch") -> str:
    return f"deploy/overlays/{env}/{name}.yaml"


def team_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DEPLOY, repo / "deploy")
    files = {".gitmedic/config.yaml": CONFIG}
    for env in ENVS:
        files[f"deploy/overlays/{env}/kustomization.yaml"] = KUSTOMIZATION.format(env=env)
        files[patch_of(env)] = FRONTEND.format(env=env)
        files[patch_of(env, "warm-cache-patch")] = WARM_CACHE.format(env=env)
    write(repo, files)
    init_repo(repo)
    commit_all(repo, "podinfo: dev and staging in one namespace")
    return repo


def run_app(repo: Path, env: str) -> list[str]:
    where = ["run", str(repo), "--path", f"deploy/overlays/{env}"]
    return [*where, "--cluster", "sim", "--forge", "local", "--once", "--json"]


@pytest.mark.integration
def test_detect_reads_both_environments_apart(tmp_path: Path) -> None:
    repo = team_repo(tmp_path)
    both = gitmedic("detect", repo, "--format", "json")
    assert (both.rc, both.json()) == (0, {"findings": [], "errors": []}), both.out
    patch = repo / patch_of("dev")
    patch.write_text(patch.read_text().replace("memory: 256Mi", "memory: 1Mi"))
    dev = gitmedic("detect", repo / "deploy/overlays/dev")
    assert dev.rc == 1
    assert "Deployment/team/dev-frontend  (deploy/bases/frontend/deployment.yaml:1)" in dev.out
    assert f"resources.limits.memory at {patch_of('dev')}:18" in dev.out, dev.out
    staging = gitmedic("detect", repo / "deploy/overlays/staging")
    assert staging.rc == 0, staging.out


@pytest.mark.integration
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_in_one_environment_s_patch_is_undone_there(tmp_path: Path, fault: str) -> None:
    repo = team_repo(tmp_path)
    env, name, old, new = FAULTS[fault]
    patch = repo / patch_of(env, name)
    original = patch.read_text()
    assert original.count(old) == 1
    patch.write_text(original.replace(old, new))
    bad = commit_all(repo, f"{env}: {fault}")

    fixed_from_history(gitmedic(*run_app(repo, env)))
    assert patch.read_text() == original
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "deploy").splitlines()
    assert changed == [patch_of(env, name)]  # the other overlay and the bases untouched
    assert one_hunk(repo, bad, patch_of(env, name))


@pytest.mark.integration
def test_a_base_fault_both_environments_have_is_undone_in_the_base(tmp_path: Path) -> None:
    repo = team_repo(tmp_path)
    base = repo / BASE
    original = base.read_text()
    base.write_text(original.replace(IMAGE, f"{IMAGE}-missing"))
    bad = commit_all(repo, "frontend: a new build")

    fixed_from_history(gitmedic(*run_app(repo, "dev")))
    assert base.read_text() == original
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "deploy").splitlines()
    assert changed == [BASE]


@pytest.mark.integration
def test_a_base_fault_the_other_environment_overrides_is_not_fixed_in_the_base(
    tmp_path: Path,
) -> None:
    repo = team_repo(tmp_path)
    pinned = FRONTEND.format(env="staging").replace(
        "        - name: frontend\n", f"        - name: frontend\n          image: {IMAGE}\n"
    )
    write(repo, {patch_of("staging"): pinned})
    commit_all(repo, "staging: pin the frontend's image")
    base = repo / BASE
    base.write_text(base.read_text().replace(IMAGE, f"{IMAGE}-missing"))
    bad = commit_all(repo, "frontend: a new build")

    run = gitmedic(*run_app(repo, "dev")[:-1])
    said = run.out + run.err
    assert run.rc == 1, said[-3000:]
    assert f"{BASE} is also rendered into staging, where" in said, said[-4000:]
    assert "PR #" not in said
    assert git(repo, "rev-parse", "main") == bad  # nothing merged: staging untouched


@pytest.mark.integration
def test_two_environments_rendering_the_same_objects_are_a_config_error(tmp_path: Path) -> None:
    repo = team_repo(tmp_path)
    for env in ENVS:  # no prefix: both render Deployment/team/frontend and the rest
        kustomization = repo / f"deploy/overlays/{env}/kustomization.yaml"
        kustomization.write_text(kustomization.read_text().replace(f"namePrefix: {env}-\n", ""))
    head = commit_all(repo, "no prefixes")
    said = "apps dev and staging both render Deployment/team/backend, Deployment/team/cache"

    found = gitmedic("detect", repo, "--format", "json")
    assert found.rc == 2
    [error] = found.json()["errors"]
    assert error["file"] == ".gitmedic/config.yaml" and said in error["message"], error
    assert "give them distinct names (a namePrefix or nameSuffix" in error["message"]

    for env in ENVS:
        run = gitmedic(*run_app(repo, env))
        assert run.rc == 2 and "both render" in run.err and "namespace team" in run.err, run.err
    assert git(repo, "rev-parse", "main") == head
    assert git(repo, "status", "--porcelain") == ""
