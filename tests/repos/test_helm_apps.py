"""Helm apps: rendered offline by helm template, findings located at the values line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.helm_trace import mark, merge, owners, read_layer
from tests.conftest import DATA
from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import Run, gitmedic

PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
CONFIG = """version: 1
apps:
  - name: podinfo-prod
    path: charts/podinfo
    namespace: prod
    helm: {values: [values-prod.yaml], release: podinfo}
"""


def chart_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    write(repo, {".gitmedic/config.yaml": CONFIG})
    init_repo(repo)
    commit_all(repo)
    return repo


def test_the_last_values_file_that_sets_a_key_owns_its_line() -> None:
    base = read_layer("values.yaml", "replicaCount: 1\nimage:\n  tag: a\n  pull: IfNotPresent\n")
    prod = read_layer("values-prod.yaml", "# prod\nimage:\n  tag: b\n")
    assert owners([base, prod]) == {
        ("replicaCount",): ("values.yaml", 1),
        ("image", "tag"): ("values-prod.yaml", 3),
        ("image", "pull"): ("values.yaml", 4),
    }
    marked = mark(merge([base, prod]))
    assert marked.keys == [("replicaCount",), ("image", "tag"), ("image", "pull")]
    assert marked.keys_in("registry/app:gmv1z") == [("image", "tag")]
    assert marked.keys_in(917_000) == [("replicaCount",)]
    assert marked.keys_in("--port=917000") == [("replicaCount",)]
    assert marked.keys_in(True) == [] and marked.keys_in("plain") == []


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_detect_on_podinfo_prod_names_the_values_line_of_the_fault(tmp_path: Path) -> None:
    repo = chart_repo(tmp_path)
    prod = repo / "charts/podinfo/values-prod.yaml"
    text = prod.read_text()
    assert "  limits:\n    memory: 256Mi\n" in text
    prod.write_text(text.replace("  limits:\n    memory: 256Mi\n", "  limits:\n    memory: 1Mi\n"))
    run = gitmedic("detect", repo)
    assert run.rc == 1, run.err
    assert "Deployment/prod/podinfo  (charts/podinfo/templates/deployment.yaml:2)" in run.out
    assert "set by resources.limits.memory at charts/podinfo/values-prod.yaml:169" in run.out
    assert "in 6 objects from 1 file" in run.out  # podinfo and redis: rendered, hooks left out
    sarif = gitmedic("detect", repo, "--format", "sarif").json()
    located = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "memory-limit-too-small"
    }
    assert located == {"charts/podinfo/values-prod.yaml"}


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_chart_without_config_renders_with_its_own_values(tmp_path: Path) -> None:
    shutil.copytree(PODINFO, tmp_path / "podinfo")
    run = gitmedic("detect", tmp_path / "podinfo", "--format", "json")
    assert run.rc == 1 and run.json()["errors"] == []
    assert {f["resource"]["name"] for f in run.json()["findings"]} == {"release-podinfo"}


@pytest.mark.integration
def test_a_missing_helm_is_an_error_naming_the_install(tmp_path: Path) -> None:
    shutil.copytree(PODINFO, tmp_path / "podinfo")
    bin_dir = tmp_path / "bin"  # git, and no helm
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    run = gitmedic_without_helm(tmp_path / "podinfo", bin_dir)
    assert run.rc == 2
    assert "helm not found: install helm v3" in run.err


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_chart_dependency_its_repository_does_not_serve_names_how_to_vendor_it(
    tmp_path: Path,
) -> None:
    import socket

    with socket.socket() as closed:  # the repository Chart.yaml names is down
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    chart = tmp_path / "podinfo"
    shutil.copytree(PODINFO, chart)
    with (chart / "Chart.yaml").open("a") as fh:
        fh.write(f"dependencies:\n- name: redis\n  version: 1.0.0\n  repository: {url}\n")
    run = gitmedic("detect", chart, "--format", "json")
    assert run.rc == 2
    [error] = run.json()["errors"]
    assert error["message"].startswith(
        f"chart redis 1.0.0 from {url}, declared in Chart.yaml cannot be pulled"
    )
    assert "vendor it into the repository" in error["message"]


@pytest.mark.integration
def test_two_environments_of_a_chart_without_helm_report_it_once(tmp_path: Path) -> None:
    repo = chart_repo(tmp_path)
    two = CONFIG + CONFIG.split("apps:\n", 1)[1].replace("podinfo-prod", "podinfo-dev").replace(
        "namespace: prod", "namespace: dev"
    )
    write(repo, {".gitmedic/config.yaml": two})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    run = gitmedic_without_helm(repo / "charts/podinfo", bin_dir, "--format", "json")
    assert run.rc == 2
    assert [e["message"][:15] for e in run.json()["errors"]] == ["helm not found:"]


def gitmedic_without_helm(path: Path, bin_dir: Path, *extra: str) -> Run:
    import os
    import subprocess
    import sys

    path_var = os.pathsep.join([str(Path(sys.executable).parent), str(bin_dir)])
    env = {**os.environ, "PATH": path_var, "GITMEDIC_HELM": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(path), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_detect_on_the_chart_s_own_values_names_the_values_yaml_line(tmp_path: Path) -> None:
    chart = tmp_path / "podinfo"
    shutil.copytree(PODINFO, chart)
    values = chart / "values.yaml"
    text = values.read_text()
    assert text.splitlines()[265:267] == ["  limits:", "  requests:"]
    values.write_text(
        text.replace("  limits:\n  requests:", "  limits:\n    memory: 1Mi\n  requests:")
    )
    run = gitmedic("detect", chart)
    assert run.rc == 1, run.err
    assert "Deployment/default/release-podinfo  (templates/deployment.yaml:2)" in run.out
    assert "set by resources.limits.memory at values.yaml:267" in run.out, run.out
