"""The GitHub Action: its step script run as the runner runs it, and actionlint on workflows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import faulty_boutique
from tests.manifests.helpers import commit_all, init_repo
from tests.packaging.conftest import Dist
from tests.support.tools import ROOT, tool_path

pytestmark = pytest.mark.integration
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def _run_step(
    repo: Path, tmp_path: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    summary = tmp_path / "step_summary.md"
    summary.write_text("")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTION_PATH": str(ROOT),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    (tmp_path / "runner").mkdir()
    step = subprocess.run(
        ["bash", str(ROOT / "action/detect.sh")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=repo,
    )
    pairs = (line.split("=", 1) for line in outputs.read_text().splitlines())
    return step, dict(pairs)


def test_the_step_annotates_findings_and_reports_outputs(dist: Dist, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", "selector")
    commit_all(repo)
    step, outputs = _run_step(
        repo,
        tmp_path,
        wheel=str(dist.wheel),
        path="deploy",
        namespace="shop",
        upload_sarif="true",
        sarif_file="out.sarif",
        schema_validation="false",
    )
    assert step.returncode == 0, step.stderr
    assert "::error file=deploy/app.yaml,line=122,title=gitmedic service-selector-unmatched::" in (
        step.stdout
    )
    assert outputs["exit-code"] == "1"
    assert int(outputs["annotations"]) == step.stdout.count("\n::") + step.stdout.startswith("::")
    assert outputs["upload"] == "true" and outputs["sarif-file"] == "out.sarif"
    assert '"version": "2.1.0"' in (repo / "out.sarif").read_text()


def test_inputs_of_the_step_are_the_action_inputs() -> None:
    (step,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "detect"]
    passed = {
        k.removeprefix("INPUT_").lower().replace("_", "-")
        for k in step["env"]
        if k.startswith("INPUT_")
    }
    assert passed == set(ACTION["inputs"]) - {"python-version"}
    for ref in (s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s):
        assert len(ref.split("@")[1]) == 40, f"{ref} is not pinned by commit SHA"


def test_actionlint_accepts_the_repos_workflows_and_the_one_init_writes(tmp_path: Path) -> None:
    init = subprocess.run(
        [sys.executable, "-m", "gitmedic", "init", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert init.returncode == 0, init.stderr
    workflows = [
        *sorted((ROOT / ".github/workflows").glob("*.yml")),
        tmp_path / ".github/workflows/gitmedic-detect.yml",
    ]
    result = subprocess.run(
        [tool_path("actionlint"), "-no-color", *map(str, workflows)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PATH": f"{Path(tool_path('actionlint')).parent}:{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_repo_with_learned_rules_gets_the_rules_extra_and_its_rules_run(
    dist: Dist, tmp_path: Path
) -> None:
    from tests.memory.rules import GOOD, deployment, write_rule

    repo = init_repo(tmp_path / "repo")
    write_rule(repo, "learned-zero-replicas.yaml", GOOD)
    (repo / "deploy").mkdir()
    (repo / "deploy/cart.yaml").write_text(yaml.safe_dump(deployment(0)))
    commit_all(repo)
    step, outputs = _run_step(
        repo, tmp_path, wheel=str(dist.wheel), path="deploy", schema_validation="false"
    )
    assert step.returncode == 0, step.stderr
    title = "title=gitmedic learned-zero-replicas::"
    assert f"{title}Deployment/shop/cart: Deployment cart has no replicas" in step.stdout
    assert outputs["exit-code"] == "1"
    venv = tmp_path / "runner/gitmedic-venv"
    assert list(venv.glob("lib/python3*/site-packages/cel_expr_python"))


def _services(count: int) -> str:
    """``count`` Services that select no pod: one warning each (pods may come from elsewhere)."""
    return "---\n".join(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc-{i:02}", "namespace": "shop"},
                "spec": {"selector": {"app": f"gone-{i}"}, "ports": [{"port": 80}]},
            }
        )
        for i in range(count)
    )


def test_every_finding_reaches_the_job_summary_and_the_counts_are_outputs(
    dist: Dist, tmp_path: Path
) -> None:
    """Past GitHub's 10 warning annotations per step, the summary still lists every one."""
    repo = init_repo(tmp_path / "repo")
    (repo / "deploy").mkdir()
    (repo / "deploy/services.yaml").write_text(
        _services(12).replace("gone-3", "<img src=x onerror=alert(1)>@acme/admins")
    )
    commit_all(repo)
    step, outputs = _run_step(
        repo, tmp_path, wheel=str(dist.wheel), path="deploy", schema_validation="false"
    )
    assert step.returncode == 0, step.stderr
    assert (outputs["critical"], outputs["warning"], outputs["info"]) == ("0", "12", "0")
    assert outputs["errors"] == "0" and outputs["sarif-file"] == "gitmedic.sarif"
    summary = (tmp_path / "step_summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| 🟠 warning")]
    assert len(rows) == 12
    assert [r.split("|")[3].strip() for r in rows] == [
        f"Service/shop/svc-{i:02}" for i in range(12)
    ]
    assert "<img" not in summary and "&lt;img" in summary  # repository text stays inert
    assert "@acme" not in summary.replace("@\u200b", "")  # and mentions nobody
    assert "deploy/services.yaml:" in rows[0]


def test_baseline_exclude_and_kubernetes_version_reach_detect(dist: Dist, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "deploy").mkdir()
    (repo / "deploy/services.yaml").write_text(_services(2))
    (repo / "deploy/hpa.yaml").write_text(
        "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\n"
        "metadata: {name: web, namespace: shop}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
        "  maxReplicas: 3\n  replicas: 2\n"
    )
    commit_all(repo)
    accepted = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "detect",
            "deploy/services.yaml",
            "--write-baseline",
            "accepted.yaml",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=repo,
    )
    assert accepted.returncode == 0, accepted.stderr
    step, outputs = _run_step(
        repo,
        tmp_path,
        wheel=str(dist.wheel),
        path="deploy",
        baseline="accepted.yaml",
        exclude="hpa-target-missing,\nnot-a-glob-*",
        kubernetes_version="1.25",
    )
    # an unknown id in exclude is refused, naming it
    assert outputs["exit-code"] == "2", step.stdout
    assert "unknown detector not-a-glob-*" in step.stdout + step.stderr
    (tmp_path / "again").mkdir()
    step, outputs = _run_step(
        repo,
        tmp_path / "again",
        wheel=str(dist.wheel),
        path="deploy",
        baseline="accepted.yaml",
        exclude="hpa-target-missing",
        kubernetes_version="1.25",
    )
    assert step.returncode == 0, step.stderr
    # the Services are accepted by the baseline, the HPA's target is not judged, and
    # the HPA is validated against 1.25's schema (gitmedic[schemas] installed)
    assert "service-selector-unmatched" not in step.stdout
    assert "hpa-target-missing" not in step.stdout
    assert "does not validate against Kubernetes 1.25" in step.stdout
    assert (outputs["critical"], outputs["exit-code"]) == ("1", "1")


def test_the_step_and_the_repos_scripts_pass_shellcheck() -> None:
    scripts = [
        ROOT / path
        for path in subprocess.run(
            ["git", "ls-files", "*.sh", ".ci/run", ".ci/fresh-path"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        if not path.startswith("tests/fixtures/")  # others' scripts, copied as they are
    ]
    assert ROOT / "action/detect.sh" in scripts
    shellcheck = Path(sys.executable).parent / "shellcheck"
    result = subprocess.run(
        [str(shellcheck), "--severity=warning", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
