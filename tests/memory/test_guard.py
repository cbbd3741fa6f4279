"""The memory guard accepts good memory and names every problem of bad memory."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gitmedic.bot.cli import main
from gitmedic.bot.memory.guard import check_memory
from tests.memory.test_sandbox import GOOD

PLAYBOOK = """---
id: scaled-to-zero-learned
fault_class: scaled-to-zero
title: A workload others call is scaled to zero
detectors: [learned-zero-replicas]
risk: low
fix:
  object: resource
  paths: ["spec.replicas"]
---
## Decide
## Triage
## Localize
## Verify
## Mitigate
"""
OUTCOME = {
    "id": "inc-1",
    "commits": ["abc"],
    "detectors": ["x"],
    "playbooks": [],
    "strategy": "bisect",
    "classification": "service-target-port",
    "tokens": 0,
    "cost_usd": 0.0,
    "opened_at": "2026-11-29T10:00:00Z",
    "closed_at": "2026-11-29T10:05:00Z",
}


def deployment(replicas: int) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cart", "namespace": "shop"},
        "spec": {"replicas": replicas},
    }


def memory_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    det = repo / ".gitmedic" / "detectors"
    (det / "cases" / "learned_zero").mkdir(parents=True)
    (det / "learned_zero.py").write_text(
        GOOD.replace('("scaled-to-zero",)', '("scaled-to-zero-learned",)')
    )
    for role, replicas in (("pre-fix", 0), ("post-fix", 1), ("healthy", 2)):
        case = {"mode": "live", "objects": [deployment(replicas)]}
        (det / "cases" / "learned_zero" / f"{role}.json").write_text(json.dumps(case))
    books = repo / ".gitmedic" / "playbooks"
    (books / "scaled-to-zero-learned").mkdir(parents=True)
    (books / "scaled-to-zero-learned" / "README.md").write_text(PLAYBOOK)
    (books / "README.md").write_text(
        "- [scaled-to-zero-learned](scaled-to-zero-learned/README.md)\n"
    )
    (repo / ".gitmedic" / "outcomes.jsonl").write_text(json.dumps(OUTCOME) + "\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def commit(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "memory",
        ],
        check=True,
    )


def test_good_memory_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = memory_repo(tmp_path)
    assert check_memory(repo) == []
    assert main(["memory", "check", str(repo)]) == 0
    assert "0 problems" in capsys.readouterr().out


def test_a_detector_that_fires_on_the_healthy_snapshot_is_rejected(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    case = repo / ".gitmedic/detectors/cases/learned_zero/healthy.json"
    case.write_text(json.dumps({"mode": "live", "objects": [deployment(0)]}))
    assert [str(p) for p in check_memory(repo)] == [
        ".gitmedic/detectors/learned_zero.py: fires on its healthy snapshot"
    ]


def test_a_detector_importing_os_is_rejected_before_it_runs(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    path = repo / ".gitmedic/detectors/learned_zero.py"
    path.write_text("import os\n" + path.read_text())
    assert [str(p) for p in check_memory(repo)] == [
        ".gitmedic/detectors/learned_zero.py: 1: imports os"
    ]


def test_missing_playbooks_cases_and_index_entries_are_named(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    (repo / ".gitmedic/playbooks/README.md").write_text("nothing listed\n")
    (repo / ".gitmedic/detectors/cases/learned_zero/post-fix.json").unlink()
    shutil.rmtree(repo / ".gitmedic/playbooks/scaled-to-zero-learned")
    messages = [str(p) for p in check_memory(repo)]
    assert (
        ".gitmedic/detectors/learned_zero.py: has no post-fix case "
        "(.gitmedic/detectors/cases/learned_zero/post-fix.json)" in messages
    )
    assert (
        ".gitmedic/detectors/learned_zero.py: names playbooks that do not exist: "
        "scaled-to-zero-learned" in messages
    )


def test_playbooks_must_use_placeholders_not_the_apps_names(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    path = repo / ".gitmedic/playbooks/scaled-to-zero-learned/README.md"
    path.write_text(
        PLAYBOOK.replace('"spec.replicas"', '"spec.template.spec.containers[name=cart].image"')
    )
    problems = [str(p) for p in check_memory(repo, app_names=frozenset({"cart", "frontend"}))]
    assert problems == [
        ".gitmedic/playbooks/scaled-to-zero-learned/README.md: names objects "
        "literally (cart); use placeholders"
    ]


def test_outcomes_only_grow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = memory_repo(tmp_path)
    commit(repo)
    outcomes = repo / ".gitmedic/outcomes.jsonl"
    outcomes.write_text(outcomes.read_text() + json.dumps({**OUTCOME, "id": "inc-2"}) + "\n")
    assert check_memory(repo, base_rev="HEAD") == []
    outcomes.write_text(json.dumps({**OUTCOME, "id": "inc-2"}) + "\n")
    assert [str(p) for p in check_memory(repo, base_rev="HEAD")] == [
        ".gitmedic/outcomes.jsonl: rewrites history: it must only grow from HEAD"
    ]
    outcomes.write_text(outcomes.read_text() + "{broken\n")
    assert main(["memory", "check", str(repo)]) == 1
    assert "line 2 is not JSON" in capsys.readouterr().out


def test_memory_check_without_memory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "check", str(tmp_path)]) == 2
    assert "no .gitmedic/ folder" in capsys.readouterr().err
