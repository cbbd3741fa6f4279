"""``gitmedic init``: scaffolds, refuses a missing --path, keeps files unless --force."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gitmedic import __version__
from gitmedic.bot.cli.init import action_ref

pytestmark = pytest.mark.integration  # each starts the gitmedic CLI


def _init(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", "init", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_init_writes_the_scaffold_and_prints_the_next_steps(tmp_path: Path) -> None:
    (tmp_path / "apps/shop").mkdir(parents=True)
    result = _init(tmp_path, "--path", "apps/shop", "--namespace", "shop")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:4] == [
        "created  .gitmedic/config.yaml",
        "created  .gitmedic/playbooks/README.md",
        "created  .github/workflows/gitmedic-detect.yml",
        "created  .gitmedic/outcomes.jsonl",
    ]
    assert "Next steps:" in result.stdout
    assert f"gitmedic memory check {tmp_path}" in result.stdout


def test_the_workflow_uses_the_action_with_permissions_and_pinned_actions(tmp_path: Path) -> None:
    assert _init(tmp_path).returncode == 0
    workflow = yaml.safe_load((tmp_path / ".github/workflows/gitmedic-detect.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}
    uses = [s["uses"] for s in workflow["jobs"]["detect"]["steps"] if "uses" in s]
    assert uses[-1] == f"gitmedic/gitmedic@{action_ref(__version__)}"
    for ref in uses[:-1]:
        sha = ref.split("@")[1]
        assert len(sha) == 40 and all(c in "0123456789abcdef" for c in sha), ref


def test_a_path_that_does_not_exist_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    result = _init(tmp_path, "--path", "apps/shpo")
    assert result.returncode == 2
    assert result.stderr == f"gitmedic: error: --path apps/shpo: no such folder in {tmp_path}\n"
    assert list(tmp_path.iterdir()) == []


def test_existing_files_are_kept_unless_forced(tmp_path: Path) -> None:
    assert _init(tmp_path).returncode == 0
    config = tmp_path / ".gitmedic/config.yaml"
    mine = config.read_text() + "# mine\n"  # the team's own edits, a config that loads
    config.write_text(mine)
    kept = _init(tmp_path)
    assert "kept     .gitmedic/config.yaml (exists; --force overwrites it)" in kept.stdout
    assert config.read_text() == mine
    forced = _init(tmp_path, "--force")
    assert forced.returncode == 0
    assert "replaced .gitmedic/config.yaml" in forced.stdout
    assert "apps:" in config.read_text() and "# mine" not in config.read_text()


def test_a_kept_config_that_does_not_load_is_refused_with_its_line_and_nothing_written(
    tmp_path: Path,
) -> None:
    """Re-running init over a broken config said nothing, and `run` failed on it later."""
    (tmp_path / ".gitmedic").mkdir()
    config = tmp_path / ".gitmedic/config.yaml"
    config.write_text(
        "version: 1\napps:\n  - name: a\n    path: .\n    namespace: a\n    typo: 1\n"
    )
    result = _init(tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"{config}:3: apps[0]: " in result.stderr, result.stderr  # the app holding it
    assert "'typo' was unexpected" in result.stderr
    assert "--force replaces it" in result.stderr
    assert result.stdout == ""  # neither discovery's report nor a file written
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".gitmedic", "config.yaml"]
    forced = _init(tmp_path, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "replaced .gitmedic/config.yaml" in forced.stdout
