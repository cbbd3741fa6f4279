"""The packaged CLI, installed from the wheel with the core only (`pip install gitmedic`).

These run the installed `gitmedic` script in a fresh venv that holds nothing of
the dev environment: what a CI job on a manifest repository gets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gitmedic import __version__
from tests.cli.conftest import faulty_boutique
from tests.conftest import APPS
from tests.manifests.helpers import commit_all, init_repo
from tests.packaging.conftest import Venv
from tests.support.tools import tool_path

pytestmark = pytest.mark.integration


def test_version(core_venv: Venv) -> None:
    result = core_venv.run(core_venv.bin / "gitmedic", "--version")
    assert (result.returncode, result.stdout) == (0, f"gitmedic {__version__}\n")


def test_detect_finds_faults_in_every_format(core_venv: Venv, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", "selector")
    commit_all(repo)
    gitmedic = core_venv.bin / "gitmedic"
    as_json = core_venv.run(
        gitmedic, "detect", "deploy", "--namespace", "shop", "--format", "json", cwd=repo
    )
    assert as_json.returncode == 1, as_json.stderr
    detectors = {f["detector"] for f in json.loads(as_json.stdout)["findings"]}
    assert "service-selector-unmatched" in detectors
    github = core_venv.run(
        gitmedic, "detect", "deploy", "--namespace", "shop", "--format", "github", cwd=repo
    )
    assert github.returncode == 1
    assert "::error file=deploy/app.yaml,line=122,title=gitmedic service-selector-unmatched::" in (
        github.stdout
    )
    sarif = core_venv.run(gitmedic, "detect", "deploy", "--format", "sarif", cwd=repo)
    assert json.loads(sarif.stdout)["version"] == "2.1.0"


def test_detect_on_a_clean_app_exits_0(core_venv: Venv) -> None:
    clean = APPS / "sock-shop/deploy/kubernetes/complete-demo.yaml"
    result = core_venv.run(core_venv.bin / "gitmedic", "detect", clean)
    assert result.returncode == 0, result.stdout + result.stderr


def test_sim_status_runs_on_the_core(core_venv: Venv, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml")
    commit_all(repo)
    result = core_venv.run(
        core_venv.bin / "gitmedic",
        "sim",
        "status",
        repo / "deploy",
        "--namespace",
        "shop",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["objects"]


def test_init_then_memory_check(core_venv: Venv, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "apps/shop").mkdir(parents=True)
    gitmedic = core_venv.bin / "gitmedic"
    init = core_venv.run(gitmedic, "init", repo, "--path", "apps/shop", "--namespace", "shop")
    assert init.returncode == 0, init.stderr
    assert "Next steps:" in init.stdout
    check = core_venv.run(gitmedic, "memory", "check", repo)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("argv", "extra", "module"),
    [
        (("serve",), "serve", "prometheus_client"),
        (("detect", "--live"), "kube", "kubernetes"),
    ],
    ids=["serve", "detect-live"],
)
def test_a_command_whose_extra_is_missing_names_it(
    core_venv: Venv, tmp_path: Path, argv: tuple[str, ...], extra: str, module: str
) -> None:
    result = core_venv.run(
        "env",
        "GITMEDIC_WEBHOOK_SECRET=s",
        f"GITMEDIC_STATE_DIR={tmp_path}",
        core_venv.bin / "gitmedic",
        *argv,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"gitmedic: error: gitmedic {argv[0]} needs the optional dependency {module!r}, which "
        f"the [{extra}] extra installs: pip install 'gitmedic[{extra}]' (or 'gitmedic[all]')\n"
    )


def test_a_kustomization_without_kubectl_names_the_extra(core_venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    only_git = tmp_path / "bin"  # this machine has a kubectl in /usr/bin
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    result = core_venv.run(core_venv.bin / "gitmedic", "detect", tmp_path, path=str(only_git))
    assert result.returncode == 2
    assert "pip install 'gitmedic[kustomize]'" in result.stderr


def test_a_standalone_kustomize_on_path_renders_without_kubectl(
    core_venv: Venv, tmp_path: Path
) -> None:
    """The container image's way: no [kustomize] extra, a kustomize binary on PATH."""
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/ok/app.yaml")
    # a prefix only kustomize applies: the names carry it only if kustomize build ran
    (repo / "deploy/ok/kustomization.yaml").write_text(
        "namePrefix: kz-\nresources:\n  - app.yaml\n"
    )
    (repo / "deploy/bad").mkdir()
    (repo / "deploy/bad/kustomization.yaml").write_text("resources: []\nnamePrefix: [kz-]\n")
    commit_all(repo)
    tools = tmp_path / "bin"  # git and kustomize only: this machine has a kubectl in /usr/bin
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    (tools / "kustomize").symlink_to(tool_path("kustomize"))
    result = core_venv.run(
        core_venv.bin / "gitmedic", "detect", repo, "--format", "json", path=str(tools)
    )
    assert result.returncode == 2, result.stdout + result.stderr  # 2: a render error
    report = json.loads(result.stdout)
    names = {f["resource"]["name"] for f in report["findings"]}
    assert names and all(name.startswith("kz-") for name in names), names
    # kustomize's own error, blamed on the line of the field it could not read
    (error,) = report["errors"]
    assert (error["file"], error["line"]) == ("deploy/bad/kustomization.yaml", 2), error
    assert "kustomize build failed" in error["message"] and "namePrefix" in error["message"]


@pytest.mark.parametrize("argv", [("demo",), ("run", ".")], ids=["demo", "run"])
def test_a_command_that_learns_names_the_rules_extra_before_it_starts(
    core_venv: Venv, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    init_repo(tmp_path)
    result = core_venv.run(core_venv.bin / "gitmedic", *argv, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"gitmedic: error: gitmedic {argv[0]} needs the optional dependency 'cel_expr_python', "
        "which the [rules] extra installs: pip install 'gitmedic[rules]' (or 'gitmedic[all]')\n"
    )
    assert not list(tmp_path.glob("gitmedic-demo-*")) and not (tmp_path / ".git/gitmedic").exists()


def test_detect_on_a_repo_with_learned_rules_names_the_rules_extra(
    core_venv: Venv, tmp_path: Path
) -> None:
    repo = _repo_with_a_learned_rule(tmp_path)
    result = core_venv.run(core_venv.bin / "gitmedic", "detect", "deploy", cwd=repo)
    assert result.returncode == 2
    assert "pip install 'gitmedic[rules]'" in result.stderr and "Traceback" not in result.stderr


def test_detect_runs_the_repos_learned_rules_with_the_rules_extra(
    rules_venv: Venv, tmp_path: Path
) -> None:
    repo = _repo_with_a_learned_rule(tmp_path)
    result = rules_venv.run(
        rules_venv.bin / "gitmedic", "detect", "deploy", "--format", "json", cwd=repo
    )
    assert result.returncode == 1, result.stderr
    found = [f for f in json.loads(result.stdout)["findings"] if f["detector"] == RULE_ID]
    assert [(f["resource"]["name"], f["summary"]) for f in found] == [
        ("cart", "Deployment cart has no replicas")
    ]


def test_the_demo_runs_with_the_rules_extra(rules_venv: Venv, tmp_path: Path) -> None:
    result = rules_venv.run(rules_venv.bin / "gitmedic", "demo", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "\x1b[" not in result.stdout  # not a terminal: no styles
    assert "summary (simulated seconds)" in result.stdout


RULE_ID = "learned-zero-replicas"


def _repo_with_a_learned_rule(tmp_path: Path) -> Path:
    from tests.memory.rules import GOOD, deployment, write_rule

    repo = init_repo(tmp_path / "repo")
    write_rule(repo, f"{RULE_ID}.yaml", GOOD)
    (repo / "deploy").mkdir()
    (repo / "deploy/cart.yaml").write_text(json.dumps(deployment(0)))
    commit_all(repo)
    return repo
