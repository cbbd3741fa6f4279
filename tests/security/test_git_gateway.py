"""Every git process gitmedic starts goes through one gateway, which runs nothing of the repo's.

The guard reads the source (AST): no module but ``reconciler/gitcmd.py`` may name
a process-starting API with ``"git"`` as the program, and only an allow-list of
modules may start processes at all (import-linter checks the ``subprocess``
import; this also covers ``os.system``, ``os.exec*``, ``asyncio`` subprocesses).
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

import gitmedic
from gitmedic.reconciler import gitcmd

SRC = Path(gitmedic.__file__).parent
GATEWAY = "reconciler/gitcmd.py"
# The modules allowed to start a process that is not git: kubectl kustomize, helm
# template, and helm pull (with private HELM_* homes, from a declared repository only).
OTHER_PROCESSES = {
    "reconciler/manifests/kustomize.py",
    "reconciler/manifests/helm.py",
    "reconciler/manifests/chart_pull.py",
    # kubectl kustomize and helm, started with the render caps (time, memory, output)
    "reconciler/manifests/render_caps.py",
    # the CEL child that evaluates learned rules under a CPU and memory bound
    "bot/memory/cel_sandbox.py",
}
# Process-starting functions, by module, as name prefixes (os.execvpe, os.spawnl ...).
SPAWNING: dict[str, tuple[str, ...]] = {
    "subprocess": ("run", "Popen", "call", "check_call", "check_output", "getoutput"),
    "os": ("system", "popen", "exec", "spawn", "posix_spawn", "fork"),
    "asyncio": ("create_subprocess_",),
    "pty": ("spawn",),
}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        out.append((rel, ast.parse(path.read_text(encoding="utf-8"), rel)))
    return out


def _spawn_calls(tree: ast.Module) -> list[ast.Call]:
    """Calls of ``subprocess.run`` & co., however the module was imported."""
    aliases: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in SPAWNING:
            for name in node.names:
                if name.name.startswith(SPAWNING[node.module]):
                    aliases[name.asname or name.name] = (node.module, name.name)
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr.startswith(SPAWNING.get(func.value.id, ()))
        ) or (isinstance(func, ast.Name) and func.id in aliases):
            calls.append(node)
    return calls


def _names_git(call: ast.Call) -> bool:
    program = call.args[0] if call.args else None
    if isinstance(program, ast.List | ast.Tuple) and program.elts:
        program = program.elts[0]
    return isinstance(program, ast.Constant) and str(program.value).split()[:1] == ["git"]


def test_only_the_gateway_and_the_allow_list_start_processes() -> None:
    starting = {rel for rel, tree in _modules() if _spawn_calls(tree)}
    assert GATEWAY in starting  # the guard sees the gateway's own calls
    assert starting - {GATEWAY} <= OTHER_PROCESSES


def test_no_module_but_the_gateway_runs_git() -> None:
    offenders = [
        f"{rel}:{call.lineno}"
        for rel, tree in _modules()
        if rel != GATEWAY
        for call in _spawn_calls(tree)
        if _names_git(call)
    ]
    assert offenders == []


def test_the_guard_finds_a_git_call_however_it_is_written() -> None:
    sample = ast.parse(
        "import subprocess as sp\nfrom subprocess import run as go\nimport os\n"
        "sp.check_output(['git', 'status'])\ngo(('git', 'log'))\nos.system('git gc')\n"
    )
    calls = _spawn_calls(sample)
    # `sp.` is an alias the attribute form does not resolve: the import-linter
    # contract on `subprocess` is what stops that one.
    assert [c.lineno for c in calls if _names_git(c)] == [5, 6]


def test_every_call_points_hooks_at_an_empty_private_directory(tmp_path: Path) -> None:
    argv = gitcmd._argv(tmp_path, "commit", ["-m", "x"])
    hooks = Path(argv[argv.index("-c") + 1].removeprefix("core.hooksPath="))
    assert argv[:3] == ["git", "-C", str(tmp_path)]
    assert hooks == gitcmd.hooks_dir() and hooks.is_dir() and not os.listdir(hooks)
    assert hooks.stat().st_uid == os.getuid() and not hooks.stat().st_mode & 0o022
    assert "core.fsmonitor=false" in argv and "credential.helper=" in argv


def test_a_planted_hooks_directory_is_not_used(tmp_path: Path) -> None:
    planted = gitcmd.hooks_dir()
    original, gitcmd._hooks = gitcmd._hooks, tmp_path / "planted"
    try:
        (tmp_path / "planted").mkdir()
        (tmp_path / "planted" / "pre-commit").write_text("#!/bin/sh\n")
        assert gitcmd.hooks_dir() != tmp_path / "planted"
        assert not os.listdir(gitcmd.hooks_dir())
    finally:
        gitcmd._hooks = original
    assert gitcmd.hooks_dir() == planted


@pytest.mark.parametrize("subcommand", ["diff", "log", "show"])
def test_diff_commands_run_no_external_diff_or_textconv(subcommand: str, tmp_path: Path) -> None:
    argv = gitcmd._argv(tmp_path, subcommand, ["HEAD"])
    at = argv.index(subcommand)
    assert argv[at : at + 3] == [subcommand, "--no-ext-diff", "--no-textconv"]


def test_the_secret_config_is_in_the_environment_not_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "color.ui")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "never")
    env = gitcmd._environment(None, {"http.extraHeader": "Authorization: Basic s3cret"})
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == (
        "http.extraHeader",
        "Authorization: Basic s3cret",
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    header = {"http.extraHeader": "Authorization: Basic s3cret"}
    proc = gitcmd.run(tmp_path, "config", "--get", "http.extraHeader", secret_config=header)
    assert proc.stdout.strip() == "Authorization: Basic s3cret"


def test_drivers_the_repo_config_defines_are_overridden_and_rescanned(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert not [f for f in gitcmd._argv(tmp_path, "status", []) if "evil" in f]
    config = ["git", "-C", str(tmp_path), "config"]
    subprocess.run([*config, "filter.evil.smudge", "sh -c exit"], check=True)
    subprocess.run([*config, "merge.evil.driver", "sh -c exit"], check=True)
    subprocess.run([*config, "remote.origin.uploadpack", "sh -c exit"], check=True)
    argv = gitcmd._argv(tmp_path / "sub", "status", [])
    assert {
        "filter.evil.smudge=",
        "filter.evil.required=false",
        "merge.evil.driver=false",
        "remote.origin.uploadpack=git-upload-pack",
    } <= set(argv)
