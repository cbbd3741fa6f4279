"""The unit tier's guard (tests/support/unit_guard.py) fails a unit test that starts
the whole CLI, runs a tool only ``make test`` builds, or sleeps for real, and lets
an integration test do all three."""

from __future__ import annotations

import sys

import pytest

from tests.support.unit_guard import GUARD, UnitTierViolation, audit, spawned


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["/venv/bin/gitmedic", "run", "repo"], "starts the whole gitmedic CLI"),
        ([sys.executable, "-m", "gitmedic", "detect", "."], "starts the whole gitmedic CLI"),
        (["python3", "-m", "gitmedic.bot.cli.main", "demo"], "starts the whole gitmedic CLI"),
        (["/cache/helm-v3.22.0/helm", "template", "."], "runs helm"),
        (["kube-score", "score", "-"], "runs kube-score"),
        (["actionlint", "ci.yml"], "runs actionlint"),
        (["/cache/kustomize-v5.8.1/kustomize", "build", "."], "runs kustomize"),
    ],
)
def test_what_a_unit_test_may_not_start_is_named(argv: list[str], named: str) -> None:
    assert spawned(argv).startswith(named)


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "commit", "-m", "gitmedic"],  # -m of git, not a module
        [sys.executable, "-c", "import gitmedic"],
        ["kubectl", "kustomize", "."],
        ["bash", "tools/kube/build.sh", "--print-dirs"],
    ],
)
def test_git_kubectl_and_scripts_are_units_business(argv: list[str]) -> None:
    assert spawned(argv) == ""


def test_the_hook_refuses_and_records_only_while_a_unit_test_runs() -> None:
    """This test is itself a unit test: the guard is on while it runs."""
    assert GUARD.active
    with pytest.raises(UnitTierViolation, match=r"time.sleep\(0.5\) sleeps for real"):
        audit("time.sleep", (0.5,))
    audit("time.sleep", (0,))  # a yield, not a wait
    audit("subprocess.Popen", ("git", ["git", "status"], None, None))
    assert GUARD.violations == ["time.sleep(0.5) sleeps for real"]
    GUARD.violations.clear()  # recorded: this test would fail for it otherwise


GUARDED_FILE = """
import subprocess, sys, time
import pytest

def test_sleeps():
    time.sleep(0.01)

def test_swallows_the_error():
    try:
        subprocess.run([sys.executable, "-m", "gitmedic", "--version"])
    except Exception:
        pass

def test_is_a_unit():  # Popen.wait(timeout) polls its child with short sleeps
    assert subprocess.run(["sleep", "0.05"], timeout=10).returncode == 0

@pytest.mark.integration
def test_may_do_both():
    time.sleep(0.01)
    subprocess.run([sys.executable, "-m", "gitmedic", "--version"], capture_output=True)
"""


@pytest.mark.integration  # a pytest session inside this one, starting the CLI once
def test_a_unit_test_that_sleeps_or_starts_the_cli_fails_and_says_to_move_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    integration: x\n"
    )
    pytester.makepyfile(test_guarded=GUARDED_FILE)

    result = pytester.runpytest("-p", "tests.support.unit_guard", "-p", "no:xdist", "-q")

    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*UnitTierViolation: a unit test time.sleep(0.01) sleeps for real: mark it *",
            "a unit test starts the whole gitmedic CLI (* -m gitmedic --version ...): mark it *",
        ]
    )
