"""A rendered field no file sets as a value escalates, saying where it comes from.

A fault written into a chart's template is no values change: editing templates
is a person's call, so ``gitmedic run`` opens no pull request and escalates,
naming the template. An image a kustomization's ``images:`` entry sets is
restored in that entry (other transformer-made fields: tests/repo/
test_values_and_images_behind_fields.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import gitmedic

PODINFO = DATA / "gitops-repos/podinfo"
TEMPLATE = "charts/podinfo/templates/deployment.yaml"


def no_fix_and_said(repo: Path, bad: str, reason: str) -> None:
    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once")
    said = run.out + run.err  # events go to stderr
    assert reason in said, said[-4000:]
    assert "PR #" not in said  # escalated, no pull request
    assert git(repo, "rev-parse", "main") == bad


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_fault_in_a_chart_template_escalates_naming_the_template(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO / "charts/podinfo", repo / "charts/podinfo")
    config = (
        "version: 1\napps:\n"
        "  - {name: podinfo, path: charts/podinfo, namespace: web, helm: {release: podinfo}}\n"
    )
    write(repo, {".gitmedic/config.yaml": config})
    init_repo(repo)
    commit_all(repo, "podinfo")
    template = repo / TEMPLATE
    text = template.read_text()
    line = "      terminationGracePeriodSeconds: 30\n"
    template.write_text(text.replace(line, line + "      dnsPolicy: None\n"))
    bad = commit_all(repo, "podinfo: no cluster DNS")
    no_fix_and_said(
        repo,
        bad,
        f"spec.template.spec.dnsPolicy of Deployment/web/podinfo is written in the chart's "
        f"template {TEMPLATE}, not set from a value",
    )


def overlay_repo(tmp_path: Path, images: str = "") -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO / "deploy", repo / "deploy")
    config = "version: 1\napps:\n  - {name: dev, path: deploy/overlays/dev, namespace: dev}\n"
    write(repo, {".gitmedic/config.yaml": config})
    kustomization = repo / "deploy/overlays/dev/kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + images)
    init_repo(repo)
    commit_all(repo, "podinfo overlays")
    return repo


@pytest.mark.integration
def test_an_image_an_overlay_s_images_entry_sets_is_restored_in_that_entry(
    tmp_path: Path,
) -> None:
    """Changed deliberately (issue 23): a release bumps the kustomization's ``images:``
    entry (as Flux image automation does), so a bad tag there is restored there, not
    escalated; the entry's file is the only one the fix changes."""
    good = "images:\n  - name: docker.io/redis\n    newTag: 8.8.0\n"
    repo = overlay_repo(tmp_path, good)
    kustomization = repo / "deploy/overlays/dev/kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("8.8.0", "0.0.0-missing"))
    bad = commit_all(repo, "dev: redis tag")

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once")

    assert "Traceback" not in run.err, run.err[-3000:]
    changed = git(repo, "diff", "--name-only", bad, "main", "--", ".", ":!.gitmedic").split()
    assert changed == ["deploy/overlays/dev/kustomization.yaml"], run.err[-3000:]
    restored = git(repo, "show", "main:deploy/overlays/dev/kustomization.yaml")
    assert restored.endswith("images:\n  - name: docker.io/redis\n    newTag: 8.8.0")
