"""A command whose extra is missing exits 2 naming the extra; other missing modules are bugs.

The CLI runs in a subprocess whose import system refuses one module, as a venv
without that extra would; tests/packaging/test_packaged_cli.py checks the same
against a real core-only install.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.bot.common.extras import EXTRA_OF_MODULE, missing_extra_message
from gitmedic.reconciler.transaction.gate import Gate

BLOCKED_RUN = """
import sys
from importlib.abc import MetaPathFinder

class Refuse(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == sys.argv[1]:
            raise ModuleNotFoundError(f"No module named {sys.argv[1]!r}", name=sys.argv[1])
        return None

sys.meta_path.insert(0, Refuse())
from gitmedic.bot.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def _cli_without(
    module: str, *argv: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, module, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={
            "PATH": "/usr/bin:/bin",
            "GITMEDIC_WEBHOOK_SECRET": "s",
            "PYTHONPATH": "",
            **(env or {}),
        },
    )


@pytest.mark.integration
def test_serve_without_fastapi_names_the_serve_extra(tmp_path: Path) -> None:
    result = _cli_without("fastapi", "serve", "--state-dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "pip install 'gitmedic[serve]'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.integration
def test_run_with_a_postgresql_journal_without_psycopg_names_the_postgres_extra(
    tmp_path: Path,
) -> None:
    from gitmedic.sim.faults.git import init_repo

    repo = tmp_path / "repo"
    (repo / "apps" / "shop").mkdir(parents=True)
    (repo / "apps" / "shop" / "app.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    init_repo(repo)
    url = {
        "GITMEDIC_JOURNAL_URL": "postgresql://bot:pw-never-said@127.0.0.1:1/j",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a worktree's source, if it runs one
    }
    argv = ("run", str(repo), "--path", "apps/shop", "--cluster", "sim", "--once")
    result = _cli_without("psycopg", *argv, cwd=tmp_path, env=url)
    assert result.returncode == 2, result.stderr
    assert "pip install 'gitmedic[postgres]'" in result.stderr
    assert "Traceback" not in result.stderr and "pw-never-said" not in result.stderr


@pytest.mark.integration
def test_a_missing_module_no_extra_provides_is_a_bug_with_its_traceback(tmp_path: Path) -> None:
    result = _cli_without("yaml", "demo", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "internal error" in result.stderr


def test_every_extra_named_is_one_pyproject_declares() -> None:
    import tomllib

    from tests.support.tools import ROOT

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(EXTRA_OF_MODULE.values()) <= set(declared["optional-dependencies"])


def test_the_message_names_command_module_and_extra() -> None:
    exc = ModuleNotFoundError("No module named 'github'", name="github")
    assert missing_extra_message(exc, "run") == (
        "gitmedic run needs the optional dependency 'github', which the [github] extra "
        "installs: pip install 'gitmedic[github]' (or 'gitmedic[all]')"
    )
    assert missing_extra_message(ModuleNotFoundError("x", name="yaml"), "detect") is None


def test_the_gate_without_schemas_says_it_did_not_check_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitmedic.detectors.snapshot import Snapshot
    from gitmedic.reconciler.manifests.load import DesiredState

    monkeypatch.setitem(sys.modules, "kubernetes_validate", None)
    state = DesiredState(Snapshot([]), [], [])
    report = Gate(lambda sha: state, []).check("base", "head", [])
    assert report.ok
    assert report.summary == (
        "no new findings, targets cleared (schemas not checked: pip install 'gitmedic[kube]')"
    )
