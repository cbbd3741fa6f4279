"""The sim never invents a fault from what it does not know (issue 23, item 5).

Two false reverts, each through the real ``gitmedic run --once --cluster sim
--forge local`` on a git repo made from the real fixtures:

- online-boutique: a person pins a service to the image the repo's own
  ``release/`` manifests deploy. The sim answered "cannot pull image" and the bot
  merged a revert of that person's change.
- podinfo with two environments, ``gitmedic init``'s config committed after the
  repo's history: a correct fix of production's values was reverted ("not deployed
  after 600s: cannot pull image redis:8.8.0", an image in the repo since its first
  commit), and main kept the fault.

Both changes are kept now. An image that no commit ever named still fails to pull,
the fault is still fixed, and ``gitmedic sim status`` shows what the loop saw.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from gitmedic.sim.faults.git import commit_all, init_repo
from tests.bot.cli_world import git, gitmedic, prs, run_once
from tests.conftest import APPS, DATA
from tests.repos.conftest import CHART_WARNING, fixed_from_history

BOUTIQUE = APPS / "online-boutique"
PODINFO = DATA / "gitops-repos/podinfo"
FRONTEND = "kubernetes-manifests/frontend.yaml"
APP_CONFIG = """version: 1
apps:
  - name: boutique
    path: kubernetes-manifests
    namespace: boutique
    engine: {kind: sim}
"""
PODINFO_CONFIG = """version: 1
apps:
  - name: podinfo-prod
    path: charts/podinfo
    namespace: prod
    helm: {values: [values-prod.yaml], release: podinfo}
  - name: podinfo-staging
    path: deploy/overlays/staging
    namespace: staging
"""
PROD = "charts/podinfo/values-prod.yaml"
LIMIT = ("  limits:\n    memory: 256Mi\n", "  limits:\n    memory: 1Mi\n")


def boutique_repo(tmp_path: Path) -> Path:
    """The whole online-boutique folder as a team keeps it: the app deploys
    ``kubernetes-manifests/``; ``release/`` holds the pinned release images."""
    repo = tmp_path / "boutique"
    for part in ("kubernetes-manifests", "release"):
        shutil.copytree(BOUTIQUE / part, repo / part)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(APP_CONFIG)
    init_repo(repo)
    return repo


def release_image(repo: Path, service: str) -> str:
    text = (repo / "release/kubernetes-manifests.yaml").read_text()
    found = re.search(rf"image: (\S+/{service}:\S+)", text)
    assert found is not None
    return found.group(1)


def pin_frontend(repo: Path, image: str) -> str:
    manifest = repo / FRONTEND
    text = manifest.read_text()
    assert text.count("image: frontend\n") == 1
    manifest.write_text(text.replace("image: frontend\n", f"image: {image}\n"))
    return commit_all(repo, f"frontend: pin {image}")


def sim_status(path: Path, namespace: str, *rev: str) -> dict[str, Any]:
    done = gitmedic("sim", "status", path, "--namespace", namespace, *rev, "--json")
    assert done.rc == 0, done.err
    status: dict[str, Any] = done.json()
    return status


def waiting(status: dict[str, Any], workload: str) -> set[str]:
    """The waiting reasons of the pods of ``workload`` (``running`` when none waits)."""
    reasons = set()
    for obj in status["objects"]:
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith(f"{workload}-"):
            for cs in obj["status"].get("containerStatuses", []):
                reasons.add(cs["state"].get("waiting", {}).get("reason", "running"))
    return reasons


@pytest.mark.integration
def test_a_service_pinned_to_the_repo_s_own_release_image_is_kept(tmp_path: Path) -> None:
    repo = boutique_repo(tmp_path)
    pinned = pin_frontend(repo, release_image(repo, "frontend"))

    run = run_once(repo)

    assert run.rc == 0, run.err[-3000:]
    assert run.json() == {"healthy": True, "incidents": []}
    assert prs(repo) == []  # no fix, no revert
    assert git(repo, "rev-parse", "main") == pinned
    status = sim_status(repo / "kubernetes-manifests", "boutique")
    assert waiting(status, "frontend") == {"running"}  # sim status sees the loop's world


@pytest.mark.integration
def test_an_image_no_commit_ever_named_still_fails_to_pull_and_is_fixed(tmp_path: Path) -> None:
    repo = boutique_repo(tmp_path)
    never = release_image(repo, "frontend").rsplit(":", 1)[0] + ":v0.10.99-never-pushed"
    bad = pin_frontend(repo, never)

    status = sim_status(repo / "kubernetes-manifests", "boutique", "--rev", bad)
    assert waiting(status, "frontend") & {"ErrImagePull", "ImagePullBackOff"}
    run = run_once(repo)

    (incident,) = run.json()["incidents"]
    pulls = [f for f in incident["findings"] if f["detector"] == "pod-image-pull"]
    assert pulls and never in pulls[0]["summary"], run.out
    assert [t["status"] for t in incident["transactions"]] == ["committed"]
    assert (run.rc, run.json()["healthy"]) == (0, True), run.err[-3000:]
    assert "image: frontend\n" in (repo / FRONTEND).read_text()


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_fix_of_one_environment_is_kept_when_the_chart_runs_an_image_of_the_first_commit(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "podinfo"
    for part in ("charts", "deploy", "kustomize"):
        shutil.copytree(PODINFO / part, repo / part)
    init_repo(repo)  # the team's history, before gitmedic
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(PODINFO_CONFIG)
    commit_all(repo, "gitmedic init")
    prod = repo / PROD
    original = prod.read_text()
    assert original.count(LIMIT[0]) == 1 and "repository: redis\n  tag: 8.8.0" in original
    prod.write_text(original.replace(*LIMIT))
    commit_all(repo, "prod: a memory limit too small")

    run = run_once(repo)

    fixed_from_history(run, left=frozenset({CHART_WARNING}))
    assert prod.read_text() == original  # main keeps the fix
    assert not [p for p in prs(repo) if p["title"].startswith("Revert")]
    findings = [f["summary"] for i in run.json()["incidents"] for f in i["findings"]]
    assert not [s for s in findings if "redis" in s], findings
    status = sim_status(repo / "charts/podinfo", "prod")
    assert waiting(status, "podinfo-redis") == {"running"}
    assert waiting(status, "podinfo") == {"running"}
