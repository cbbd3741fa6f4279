"""README's install commands (section "Install") are the ones run here.

Each channel's code block is read from README.md: the pip commands run in a
fresh venv with the built wheel in place of the index, the chart's kubectl
commands make their Secrets (``--dry-run=client``) and its ``helm install``
renders as ``helm template`` with the same arguments, the action's snippet is
linted as a workflow, and the image's commands agree with the Dockerfile.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.chart.conftest import Helm, objects
from tests.cli.conftest import faulty_boutique
from tests.manifests.helpers import commit_all, init_repo
from tests.packaging.conftest import Dist, make_venv
from tests.packaging.test_dockerfile import stages
from tests.support.tools import ROOT, tool_path

pytestmark = pytest.mark.integration
README = (ROOT / "README.md").read_text()


def block(heading: str) -> str:
    section = README.split(f"\n### {heading}\n", 1)[1]
    match = re.search(r"```(?:sh|yaml)\n(.*?)```", section, re.S)
    assert match, f"README: no code block under {heading}"
    return match.group(1)


def commands(heading: str) -> list[list[str]]:
    return [shlex.split(line) for line in block(heading).splitlines() if line.strip()]


def test_pip_commands(dist: Dist, tmp_path: Path) -> None:
    install, version, detect = commands("pip")
    assert install == ["pip", "install", "gitmedic"]
    venv = make_venv(tmp_path / "venv", dist.wheel)
    assert venv.run(*version).stdout.startswith("gitmedic ")
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "apps/shop/app.yaml", "selector")
    commit_all(repo)
    result = venv.run(*detect, cwd=repo)
    assert result.returncode == 1
    assert result.stdout.startswith("::")


def test_the_extras_named_are_the_ones_declared() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = set(re.findall(r"`gitmedic\[(\w+)\]`", README.split("### pip", 1)[1]))
    assert named == set(declared["optional-dependencies"]) - {"dev"}


def test_chart_commands(tmp_path: Path) -> None:
    helm = Helm(tool_path("helm"))
    namespace, secret, install = commands("Helm chart")
    assert namespace == ["kubectl", "create", "namespace", "gitmedic"]
    (tmp_path / "app-private-key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    kubectl = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or "kubectl"
    made = subprocess.run(
        [kubectl, *secret[1:], "--dry-run=client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "WEBHOOK_SECRET": "s3cret", "KUBECONFIG": "/dev/null"},
    )
    assert made.returncode == 0, made.stderr
    assert install[:2] == ["helm", "install"]
    rendered = helm.run("template", *install[2:])
    assert rendered.returncode == 0, rendered.stderr
    manifests = tmp_path / "all.yaml"
    manifests.write_text(
        "---\n".join(json.dumps(o) + "\n" for o in objects(rendered.stdout)) + "---\n" + made.stdout
    )
    detect = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(manifests), "--fail-on", "info"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert detect.returncode == 0, detect.stdout + detect.stderr


def test_action_snippet(tmp_path: Path) -> None:
    snippet = yaml.safe_load(block("GitHub Action"))
    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    (gitmedic,) = [s for s in snippet["steps"] if s["uses"].startswith("gitmedic/gitmedic@")]
    assert set(gitmedic["with"]) <= inputs
    workflow = {
        "on": "pull_request",
        "permissions": snippet["permissions"],
        "jobs": {"detect": {"runs-on": "ubuntu-latest", "steps": snippet["steps"]}},
    }
    path = tmp_path / ".github/workflows/detect.yml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(workflow, sort_keys=False))
    lint = subprocess.run(
        [tool_path("actionlint"), "-no-color", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_image_commands_agree_with_the_dockerfile() -> None:
    build, run = commands("Container image")
    assert build[:2] == ["docker", "build"] and build[-1] == "."
    final = stages()[-1]
    (volume,) = json.loads(final.all("VOLUME")[0])
    assert "--read-only" in run and "/tmp" in run
    assert f"gitmedic-state:{volume}" in run
    assert run[run.index("-p") + 1] == "8080:8080"
    assert build[build.index("-t") + 1] in run
