"""``gitmedic completion SHELL`` prints a script that completes commands, options and choices."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", "completion", shell],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _complete(script: str, *words: str) -> list[str]:
    """What bash offers for the last of ``words``, as a user's Tab would."""
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1};"
        ' _shtab_gitmedic; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return sorted(line for line in done.stdout.splitlines() if line)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_options_and_choices() -> None:
    script = _script("bash")
    assert _complete(script, "gitmedic", "de") == ["demo", "detect"]
    assert "--fail-on" in _complete(script, "gitmedic", "detect", "--fa")
    assert _complete(script, "gitmedic", "detect", "--format", "") == [
        "github",
        "json",
        "sarif",
        "text",
    ]
    assert _complete(script, "gitmedic", "run", "--cluster", "") == ["kube", "sim"]


def test_zsh_and_tcsh_scripts_name_the_program() -> None:
    assert _script("zsh").startswith("#compdef gitmedic")
    assert "complete gitmedic" in _script("tcsh")


def test_an_unknown_shell_is_refused_with_the_choices() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", "completion", "fish"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "choose from bash, zsh, tcsh" in done.stderr.replace("'", "")


def test_without_shtab_the_command_names_the_completion_extra(tmp_path: Path) -> None:
    from tests.packaging.test_missing_extra import _cli_without

    result = _cli_without("shtab", "completion", "bash", cwd=tmp_path)
    assert result.returncode == 2
    assert "pip install 'gitmedic[completion]'" in result.stderr
    assert "Traceback" not in result.stderr
