"""Learned detectors run only after the AST check, and then only inside the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.memory.ast_check import check_source
from gitmedic.bot.memory.sandbox import SandboxError, run_sandboxed
from gitmedic.detectors import Obj, Resource, Snapshot

GOOD = """
from gitmedic.detectors import DetectorSpec, Scope, Severity

SPEC = DetectorSpec(
    id="learned-zero-replicas",
    description="A Deployment scaled to zero.",
    kinds=frozenset({"Deployment"}),
    severity=Severity.CRITICAL,
    remediation="Restore replicas from Git history.",
    scope=Scope.BOTH,
    playbooks=("scaled-to-zero",),
)


def detect(snapshot):
    for obj in snapshot.of_kind("Deployment"):
        if obj.spec.get("replicas") == 0:
            yield SPEC.finding(obj.ref, f"{obj.name} has no replicas", params={"replicas": 0})
"""


def snapshot(replicas: int) -> Snapshot:
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cart", "namespace": "shop"},
        "spec": {"replicas": replicas},
    }
    return Snapshot([Obj(Resource("Deployment", "shop", "cart", "apps/v1"), body)])


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "learned.py"
    path.write_text(source)
    return path


def test_a_good_detector_runs_and_reports(tmp_path: Path) -> None:
    assert check_source(GOOD, "learned.py") == []
    run = run_sandboxed(write(tmp_path, GOOD), snapshot(0))
    assert run.detector_id == "learned-zero-replicas" and run.playbooks == ("scaled-to-zero",)
    assert [f.resource.name for f in run.findings] == ["cart"]
    assert run_sandboxed(write(tmp_path, GOOD), snapshot(2)).findings == ()


@pytest.mark.parametrize(
    ("snippet", "reason"),
    [
        ("import os", "imports os"),
        ("from subprocess import run", "imports subprocess"),
        ("x = open('/etc/passwd')", "uses open()"),
        ("x = ().__class__.__bases__", "reaches the dunder attribute __class__"),
        ("x = eval('1')", "uses eval()"),
        ("from . import sibling", "imports ."),
    ],
)
def test_the_ast_check_names_what_is_refused(snippet: str, reason: str) -> None:
    problems = check_source(GOOD + "\n" + snippet + "\n", "learned.py")
    assert any(reason in p for p in problems), problems


def test_missing_spec_or_detect_is_refused() -> None:
    assert check_source("x = 1\n", "l.py") == [
        "l.py: defines no detect(snapshot) function",
        "l.py: defines no SPEC = DetectorSpec(...)",
    ]


@pytest.mark.integration
def test_a_detector_that_loops_forever_is_stopped(tmp_path: Path) -> None:
    source = GOOD.replace("    for obj in", "    while True:\n        pass\n    for obj in")
    with pytest.raises(SandboxError, match="time limit of 2s"):
        run_sandboxed(write(tmp_path, source), snapshot(0), time_limit_s=2)


@pytest.mark.integration
def test_a_detector_that_allocates_without_bound_is_stopped(tmp_path: Path) -> None:
    source = GOOD.replace(
        "    for obj in",
        "    hoard = []\n    while True:\n        hoard.append('x' * 10**7)\n    for obj in",
    )
    with pytest.raises(SandboxError, match="memory limit"):
        run_sandboxed(write(tmp_path, source), snapshot(0), time_limit_s=20)


def test_the_sandbox_refuses_what_slips_past_the_ast_check(tmp_path: Path) -> None:
    # importlib is not on the allowlist the AST check enforces; the audit hook is the second wall.
    source = GOOD.replace("def detect(snapshot):", "def detect(snapshot):\n    import socket")
    with pytest.raises(SandboxError, match="may not import socket"):
        run_sandboxed(write(tmp_path, source), snapshot(0))


def test_the_sandbox_refuses_a_module_already_loaded_by_the_interpreter(tmp_path: Path) -> None:
    # os is in sys.modules before the hook goes in, so no audit event fires for it.
    source = GOOD.replace("def detect(snapshot):", "def detect(snapshot):\n    import os")
    with pytest.raises(SandboxError, match="may not import os"):
        run_sandboxed(write(tmp_path, source), snapshot(0))


@pytest.mark.parametrize("lever", ["signal", "threading"])
def test_the_sdk_hands_no_process_lever_to_a_learned_detector(tmp_path: Path, lever: str) -> None:
    # The AST check allows any name from the SDK; the SDK's modules must not expose
    # signal or threading as attributes (the runner imports them where it uses them).
    source = GOOD.replace(
        "def detect(snapshot):",
        f"def detect(snapshot):\n    from gitmedic.detectors.runner import {lever}",
    )
    with pytest.raises(SandboxError, match=f"cannot import name '{lever}'"):
        run_sandboxed(write(tmp_path, source), snapshot(0))
