"""Nothing in the repository runs: planted hooks and configured programs never fire.

The attack of issue 12: ``.git/hooks/reference-transaction`` (git runs it on every
ref update) and its friends are symlinked to a script committed in the repo, and
``.git/config`` (which an escaped detector could have written) names the same
script as fsmonitor, filter, diff and merge driver, selected by a committed
``.gitattributes``. The script writes a marker and dumps its environment (where
the bot's tokens would be). ``gitmedic run`` and ``gitmedic detect --rev`` run as
real processes with secrets in their environment; the marker never appears. A
plain ``git`` call at the end proves the plant was live.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.run_world import app_repo, with_fault

HOOKS = (
    "reference-transaction",
    "post-checkout",
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-merge",
    "pre-merge-commit",
    "post-index-change",
    "post-rewrite",
    "pre-auto-gc",
)
SECRETS = {
    "GITHUB_TOKEN": "ghp_planted_token_value",
    "OPENAI_API_KEY": "sk-planted-llm-key",
    "GITMEDIC_WEBHOOK_SECRET": "planted-webhook-secret",
}
CONFIGURED_PROGRAMS = (
    "core.fsmonitor",
    "filter.collect.clean",
    "filter.collect.smudge",
    "diff.collect.textconv",
    "diff.collect.command",
    "merge.collect.driver",
    "diff.external",
    "core.sshCommand",
    "credential.helper",
)
KUSTOMIZATION = "resources:\n- app.yaml\n"
APP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def plant(repo: Path, marker: Path) -> None:
    """Commit the script and .gitattributes, then point hooks and config at the script."""
    script = repo / "tools" / "collect.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nenv >> {marker}.env\ncat\n')
    script.chmod(0o755)
    (repo / ".gitattributes").write_text("* filter=collect diff=collect merge=collect\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "tools")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        (hooks / name).unlink(missing_ok=True)
        (hooks / name).symlink_to(os.path.relpath(script, hooks))
    for key in CONFIGURED_PROGRAMS:
        _git(repo, "config", key, str(script))


def gitmedic(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **SECRETS}
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


def assert_live(repo: Path, marker: Path) -> None:
    """The plant works: a plain git ref update runs the hook."""
    _git(repo, "update-ref", "refs/test/probe", "HEAD")
    assert marker.exists(), "the planted hook should fire for a plain git call"


@pytest.mark.integration
def test_run_once_runs_no_planted_hook_or_configured_program(tmp_path: Path) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    marker = tmp_path / "ran"
    plant(repo, marker)
    with_fault(repo, app, namespace, "service-target-port", target="productcatalogservice")
    argv: list[str | Path] = [
        "run",
        repo,
        "--path",
        app,
        "--namespace",
        namespace,
        "--cluster",
        "sim",
    ]

    proc = gitmedic(*argv, "--forge", "local", "--once", "--json", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert '"status": "committed"' in proc.stdout, "the loop really committed and merged"
    assert not marker.exists(), marker.read_text()
    assert not Path(f"{marker}.env").exists()
    assert_live(repo, marker)


@pytest.mark.integration
def test_detect_at_a_revision_runs_no_planted_filter_or_hook(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "apps" / "kust").mkdir(parents=True)
    (repo / "apps" / "kust" / "kustomization.yaml").write_text(KUSTOMIZATION)
    (repo / "apps" / "kust" / "app.yaml").write_text(APP)
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    marker = tmp_path / "ran"
    plant(repo, marker)

    proc = gitmedic("detect", repo / "apps", "--rev", "HEAD", "--format", "json", cwd=tmp_path)

    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["errors"] == []
    assert not marker.exists(), marker.read_text()
    assert_live(repo, marker)
