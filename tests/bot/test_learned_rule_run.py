"""Through the real commands, in a subprocess: the demo's lesson is a CEL rule, learned and used.

``gitmedic demo`` runs the loop on the bundled shop: story (b) learns the lesson
(``pod-image-pull`` refined by "the container also sets command") and commits it
to main as data, a rule under ``.gitmedic/rules/`` and a playbook, through a
memory PR of the local forge; story (c) fixes the same fault class on another
service from it, at the first attempt, with 0 tokens. ``gitmedic memory check``
then accepts the memory on main, which holds no code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RULE = ".gitmedic/rules/learned-pod-image-pull-with-command.yaml"


def _gitmedic(tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITMEDIC_")}
    env["TMPDIR"] = str(tmp)
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )


def _git(repo: str, *argv: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *argv], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.integration
def test_the_demo_learns_the_lesson_as_a_rule_and_fixes_story_c_from_it(tmp_path: Path) -> None:
    demo = _gitmedic(tmp_path, "demo")

    assert demo.returncode == 0, demo.stderr[-2000:]
    (summary_file,) = tmp_path.glob("gitmedic-demo-*/summary.json")
    summary = json.loads(summary_file.read_text())
    _, b, c, _ = summary["stories"]
    assert b["outcomes"] == ["reverted", "committed"]
    assert c["outcomes"] == ["committed"] and c["reverts"] == 0 and c["tokens"] == 0
    assert c["playbooks"] == ["pod-image-pull-with-command"]
    repo = summary["repo"]
    on_main = _git(repo, "ls-tree", "-r", "--name-only", "main", ".gitmedic/").split()
    assert RULE in on_main and not [p for p in on_main if p.endswith(".py")]
    rule = _git(repo, "show", f"main:{RULE}")
    assert "refines: pod-image-pull" in rule and "has(c.command)" in rule
    assert "catalog" not in rule and "2.1.0" not in rule  # the fault class, not the incident
    merged = _git(repo, "log", "--format=%s", "main", "--", RULE)
    assert "gitmedic memory: learn pod-image-pull-with-command" in merged

    _git(repo, "checkout", "-q", "main")
    check = _gitmedic(tmp_path, "memory", "check", repo)
    assert check.returncode == 0, check.stdout
    assert "0 problems" in check.stdout
