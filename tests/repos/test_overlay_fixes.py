"""A fault injected through an overlay patch is fixed in that patch, not in the base.

podinfo's production overlay gets a patch of the frontend (as teams keep them:
resources, probes, its backend's address and placement per environment); a bad
change to that patch is what
``gitmedic run --cluster sim --forge local --once`` must undo, in one hunk of
the patch, leaving the shared base and the other overlays as they were.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import fixed_from_history, gitmedic, one_hunk

DEPLOY = DATA / "gitops-repos/podinfo/deploy"
PATCH = "deploy/overlays/production/frontend-patch.yaml"
CONFIG = """version: 1
apps:
  - {name: production, path: deploy/overlays/production, namespace: production}
  - {name: staging, path: deploy/overlays/staging, namespace: staging}
  - {name: dev, path: deploy/overlays/dev, namespace: dev}
"""
HEALTHY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
spec:
  template:
    spec:
      containers:
        - name: frontend
          env:
            - name: PODINFO_BACKEND_URL
              value: http://backend:9898/echo
          livenessProbe:
            periodSeconds: 10
            failureThreshold: 3
          resources:
            limits:
              memory: 256Mi
            requests:
              memory: 64Mi
"""
# fault -> (old, new) in the patch
FAULTS = {
    "memory-limit-too-small": ("memory: 256Mi", "memory: 1Mi"),
    "request-too-large": ("memory: 64Mi", "memory: 200Gi"),
    "bad-image": (
        "        - name: frontend\n",
        "        - name: frontend\n          image: ghcr.io/stefanprodan/podinfo:0.0.0-missing\n",
    ),
    "nonexistent-node": (
        "    spec:\n      containers:",
        "    spec:\n      nodeSelector:\n        kubernetes.io/hostname: extra-node\n"
        "      containers:",
    ),
    "liveness-probe-aggressive": ("periodSeconds: 10", "periodSeconds: 1"),
    "env-wrong-port": ("http://backend:9898/echo", "http://backend:9899/echo"),
}


def overlay_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DEPLOY, repo / "deploy")
    kustomization = repo / "deploy/overlays/production/kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text() + "patches:\n  - path: frontend-patch.yaml\n"
    )
    write(repo, {PATCH: HEALTHY, ".gitmedic/config.yaml": CONFIG})
    init_repo(repo)
    commit_all(repo, "podinfo with a production patch")
    return repo


@pytest.mark.integration
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_in_the_production_patch_is_undone_in_that_patch(
    tmp_path: Path, fault: str
) -> None:
    repo = overlay_repo(tmp_path)
    old, new = FAULTS[fault]
    patch = repo / PATCH
    assert patch.read_text().count(old) == 1
    patch.write_text(patch.read_text().replace(old, new))
    bad = commit_all(repo, f"production: {fault}")

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    fixed_from_history(run)  # and healthy: the overlays carry no finding of their own
    assert patch.read_text() == HEALTHY  # the original value, back in the file that changed
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "deploy").splitlines()
    assert changed == [PATCH]  # the base and the other overlays are untouched
    assert one_hunk(repo, bad, PATCH)


@pytest.mark.integration
def test_detect_on_each_overlay_names_the_patch_line_of_a_patched_field(tmp_path: Path) -> None:
    repo = overlay_repo(tmp_path)
    patch = repo / PATCH
    patch.write_text(patch.read_text().replace("memory: 256Mi", "memory: 1Mi"))
    prod = gitmedic("detect", repo / "deploy/overlays/production")
    assert prod.rc == 1
    assert "Deployment/production/frontend  (deploy/bases/frontend/deployment.yaml:1)" in prod.out
    assert f"resources.limits.memory at {PATCH}:18" in prod.out
    for env in ("dev", "staging"):
        other = gitmedic("detect", repo / f"deploy/overlays/{env}", "--format", "json")
        detectors = {f["detector"] for f in other.json()["findings"]}
        assert "memory-limit-too-small" not in detectors, env


BASE = "deploy/bases/frontend/deployment.yaml"
DEV_FIRST = """version: 1
apps:
  - {name: dev, path: deploy/overlays/dev, namespace: dev}
  - {name: staging, path: deploy/overlays/staging, namespace: staging}
  - {name: production, path: deploy/overlays/production, namespace: production}
"""


def base_fault(tmp_path: Path) -> tuple[Path, str, str]:
    """The shared base's frontend memory limit cut, in a repo whose dev app runs first."""
    repo = overlay_repo(tmp_path)
    write(repo, {".gitmedic/config.yaml": DEV_FIRST})
    commit_all(repo, "dev first")
    base = repo / BASE
    original = base.read_text()
    base.write_text(original.replace("memory: 128Mi", "memory: 1Mi"))
    return repo, original, commit_all(repo, "frontend: tighter memory")


@pytest.mark.integration
def test_a_base_fault_every_environment_has_is_undone_in_the_base(tmp_path: Path) -> None:
    repo = overlay_repo(tmp_path)
    write(repo, {".gitmedic/config.yaml": DEV_FIRST, PATCH: HEALTHY.replace("256Mi", "128Mi")})
    commit_all(repo, "dev first; production's patch keeps the base's limit")
    base = repo / BASE
    original = base.read_text()
    base.write_text(original.replace("memory: 128Mi", "memory: 1Mi"))
    assert (repo / PATCH).read_text().count("memory: 128Mi") == 1
    (repo / PATCH).write_text(HEALTHY.replace("256Mi", "1Mi"))  # production has it too
    bad = commit_all(repo, "frontend: tighter memory everywhere")

    # dev's loop alone (run acts on every app; production's own patch is not this test's)
    run = gitmedic(
        "run", repo, "--app", "dev", "--cluster", "sim", "--forge", "local", "--once", "--json"
    )
    assert run.rc == 0, run.err[-2000:]
    assert base.read_text() == original  # dev's fix may edit the base every env shares
    changed = git(repo, "diff", "--name-only", bad, "main", "--", "deploy").splitlines()
    assert changed == [BASE]


@pytest.mark.integration
def test_a_base_fault_another_environment_overrides_is_not_fixed_in_the_base(
    tmp_path: Path,
) -> None:
    repo, _, bad = base_fault(tmp_path)  # production's patch keeps 256Mi: it is fine
    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once")
    said = run.out + run.err
    assert f"{BASE} is also rendered into production, where" in said, said[-4000:]
    assert "PR #" not in said
    assert git(repo, "rev-parse", "main") == bad  # nothing merged: production untouched
