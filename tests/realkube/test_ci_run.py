"""``.ci/run``: README's ``make test`` on a PATH without the machine's extra tools, and
``make demo`` in a fresh clone with an empty pip cache beside it; then the realkube
tier, unless ``make test`` and the build took so long (a loaded machine) that the tier
would carry the run past CI's 90 minutes, where nothing lands; then it is skipped,
saying so, and the run still passes. A stand-in ``make`` records each target with what
it saw (helm on PATH, its tools cache, its pip cache, its folder and commit) and a stand-in build
script returns at once, so only the script's own logic is under test; the latest
start (``REALKUBE_LATEST_START_S``) plays the clock."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
MAKE = """#!/bin/sh
echo "$1 helm=$(command -v helm || echo none) tools=${GITMEDIC_TOOLS:-unset} \
pip=${PIP_CACHE_DIR:-unset} cwd=$PWD head=$(git rev-parse HEAD)" >> CALLS
[ "$1" = demo ] && [ -n "${FAIL_DEMO:-}" ] && exit 3
exit 0
"""


def executable(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)


def checkout(tmp_path: Path, env: dict[str, str]) -> Path:
    """A git checkout holding .ci/run and .ci/fresh-path, as CI's clone does."""
    folder = tmp_path / "checkout"
    (folder / ".ci").mkdir(parents=True)
    for name in ("run", "fresh-path"):
        shutil.copy(REPO / ".ci" / name, folder / ".ci" / name)
    executable(folder / "tools" / "kube" / "build.sh", "echo 'kube tools: present'\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-C", str(folder)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "ci"]):
        subprocess.run([*git, *args], check=True, env=env, capture_output=True)
    return folder


def ci_run(
    tmp_path: Path, latest_start_s: int, **env_vars: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], Path]:
    """Runs .ci/run in a checkout; returns it, each make target with what it saw, and
    the checkout."""
    bin_dir = tmp_path / "bin"
    calls = tmp_path / "calls"
    executable(bin_dir / "make", MAKE.replace("CALLS", str(calls)))
    git_config = tmp_path / "gitconfig"
    git_config.write_text("[user]\n\tname = t\n\temail = t@t.invalid\n")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "REALKUBE_LATEST_START_S": str(latest_start_s),
        "GITMEDIC_TOOLS": str(tmp_path / "tools"),
        "GIT_CONFIG_GLOBAL": str(git_config),
        "GIT_CONFIG_NOSYSTEM": "1",
        **env_vars,
    }
    env["PATH"] = env_vars.get("PATH", env["PATH"])
    folder = checkout(tmp_path, env)
    done = subprocess.run(
        ["bash", str(folder / ".ci" / "run")],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    lines = calls.read_text().splitlines() if calls.exists() else []
    return done, {line.split()[0]: line for line in lines}, folder


def targets_in_order(calls: dict[str, str]) -> list[str]:
    """The targets but make demo's (which runs beside make test), in the order run."""
    return [t for t in calls if t != "demo"]


@pytest.mark.integration
def test_the_tier_runs_after_make_test_and_the_build(tmp_path: Path) -> None:
    done, calls, folder = ci_run(tmp_path, latest_start_s=3300)

    assert done.returncode == 0, done.stderr
    assert targets_in_order(calls) == ["test", "realkube-tier"]
    assert "kube tools: present" in done.stdout
    assert "SKIPPED" not in done.stderr
    assert f"cwd={folder}" in calls["test"]
    assert "demo" in calls, "make demo ran too"
    assert "ci: make demo in a fresh clone done" in done.stdout


@pytest.mark.integration
def test_a_tier_that_would_start_too_late_is_skipped_saying_so_and_the_run_passes(
    tmp_path: Path,
) -> None:
    done, calls, _ = ci_run(tmp_path, latest_start_s=0)

    assert done.returncode == 0, done.stderr
    assert targets_in_order(calls) == ["test"]
    assert "ci: the realkube tier is SKIPPED" in done.stderr
    assert "past the tier's latest start (0 s" in done.stderr


@pytest.mark.integration
def test_make_test_runs_without_the_machines_extra_tools_and_the_tier_with_them(
    tmp_path: Path,
) -> None:
    """helm built earlier (here, a folder of its own on PATH) is out of make test's
    reach: make test builds its own; the tier, after it, keeps the machine's PATH."""
    extra = tmp_path / "go" / "bin"
    executable(extra / "helm", "#!/bin/sh\n")
    path = f"{tmp_path / 'bin'}:{extra}:{os.environ['PATH']}"

    done, calls, _ = ci_run(tmp_path, latest_start_s=3300, PATH=path)

    assert done.returncode == 0, done.stderr
    assert "helm=none" in calls["test"] and "helm=none" in calls["demo"]
    assert f"helm={extra / 'helm'}" in calls["realkube-tier"]


@pytest.mark.integration
def test_make_demo_runs_in_a_fresh_clone_with_an_empty_pip_cache(tmp_path: Path) -> None:
    done, calls, folder = ci_run(tmp_path, latest_start_s=3300, PIP_CACHE_DIR=str(tmp_path))

    assert done.returncode == 0, done.stderr
    demo = dict(word.split("=", 1) for word in calls["demo"].split()[1:])
    head = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert Path(demo["cwd"]) != folder and demo["head"] == head, "a clone of the checkout"
    assert Path(demo["pip"]) != tmp_path and not Path(demo["pip"]).exists(), "empty: unused"
    assert f"pip={tmp_path} " in calls["test"], "make test keeps the machine's pip cache"


@pytest.mark.integration
def test_a_failing_demo_fails_the_run_before_the_tier(tmp_path: Path) -> None:
    done, calls, _ = ci_run(tmp_path, latest_start_s=3300, FAIL_DEMO="1")

    assert done.returncode == 1
    assert "ci: make demo in a fresh clone failed (exit 3)" in done.stderr
    assert "realkube-tier" not in calls


@pytest.mark.integration
def test_a_machine_with_etcd_beside_what_readme_needs_fails_before_anything_runs(
    tmp_path: Path,
) -> None:
    """No PATH can hide a tool installed beside make (an apt-get install into /usr/bin):
    the check would prove nothing, so the run stops, naming it."""
    executable(tmp_path / "bin" / "etcd", "#!/bin/sh\n")

    done, calls, _ = ci_run(tmp_path, latest_start_s=3300)

    assert done.returncode != 0
    assert f"fresh-path: etcd is reachable at {tmp_path / 'bin' / 'etcd'}" in done.stderr
    assert calls == {}, "nothing ran"


@pytest.mark.integration
def test_empty_caches_on_request_for_make_test_only(tmp_path: Path) -> None:
    done, calls, _ = ci_run(tmp_path, latest_start_s=3300, CI_EMPTY_CACHES="1")

    assert done.returncode == 0, done.stderr
    tested = dict(word.split("=", 1) for word in calls["test"].split()[1:])
    assert tested["tools"] != str(tmp_path / "tools") and tested["pip"] != "unset"
    assert Path(tested["tools"]).parent == Path(tested["pip"]).parent
    assert f"tools={tmp_path / 'tools'}" in calls["realkube-tier"], "the tier keeps its build"
