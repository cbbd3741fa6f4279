"""The memory guard accepts good memory and names every problem of bad memory."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import main
from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.learned import MIGRATION
from tests.memory.rules import GOOD, deployment

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


def memory_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    rules = repo / ".gitmedic" / "rules"
    (rules / "cases" / "learned-zero-replicas").mkdir(parents=True)
    (rules / "learned-zero-replicas.yaml").write_text(
        GOOD.replace("[scaled-to-zero]", "[scaled-to-zero-learned]")
    )
    for role, replicas in (("pre-fix", 0), ("post-fix", 1), ("healthy", 2)):
        case = {"mode": "live", "objects": [deployment(replicas)]}
        (rules / "cases" / "learned-zero-replicas" / f"{role}.json").write_text(json.dumps(case))
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


RULE = ".gitmedic/rules/learned-zero-replicas.yaml"


def test_a_rule_that_fires_on_the_healthy_snapshot_is_rejected(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    case = repo / ".gitmedic/rules/cases/learned-zero-replicas/healthy.json"
    case.write_text(json.dumps({"mode": "live", "objects": [deployment(0)]}))
    assert [str(p) for p in check_memory(repo)] == [f"{RULE}: fires on its healthy snapshot"]


def test_a_rule_off_the_schema_or_over_the_cost_bound_is_rejected_before_it_runs(
    tmp_path: Path,
) -> None:
    repo = memory_repo(tmp_path)
    path = repo / RULE
    path.write_text(GOOD.replace("severity: critical", "severity: dire"))
    assert [str(p) for p in check_memory(repo)] == [
        f"{RULE}: severity: 'dire' is not one of ['critical', 'warning', 'info']"
    ]
    nested = "[1].all(a, [2].all(b, [3].all(c, true)))"
    path.write_text(GOOD.replace("object.spec.replicas == 0", nested, 1))
    assert [str(p) for p in check_memory(repo)] == [
        f"{RULE}: match: comprehensions nest 3 deep (limit 2): over the cost limit"
    ]


def test_a_rule_that_flags_a_legitimate_configuration_is_rejected(tmp_path: Path) -> None:
    # Its own cases agree (the fix that taught it removed the variable), but a workload with
    # a database password from a Secret is how healthy apps run: configuration, not a fault.
    repo = memory_repo(tmp_path)
    (repo / RULE).write_text(
        GOOD.replace(
            "has(object.spec.replicas) && object.spec.replicas == 0",
            "podSpec.containers.exists(c, has(c.env) && c.env.exists(e, e.name == 'DB_PASSWORD'))",
        )
        .replace("reads: [Deployment]", "reads: [Deployment, StatefulSet]")
        .replace("params:\n  replicas: object.spec.replicas\n", "")
    )
    cases = repo / ".gitmedic/rules/cases/learned-zero-replicas"
    with_password = {
        **deployment(1),
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "a", "env": [{"name": "DB_PASSWORD", "value": "x"}]}]
                }
            }
        },
    }
    without = {**deployment(1), "spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}
    for role, body in (("pre-fix", with_password), ("post-fix", without), ("healthy", without)):
        (cases / f"{role}.json").write_text(json.dumps({"mode": "desired", "objects": [body]}))
    assert [str(p) for p in check_memory(repo)] == [
        f"{RULE}: matches on a credential's name (DB_PASSWORD): having a credential is "
        "configuration, not a fault",
        f"{RULE}: fires on a legitimate configuration (Deployment orders): it flags "
        "configuration, not a fault",
    ]


def test_a_rule_that_duplicates_another_is_rejected_merge_them(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    twin = (
        GOOD.replace("learned-zero-replicas", "learned-zero-again")
        .replace("[scaled-to-zero]", "[scaled-to-zero-learned]")
        .replace("object.spec.replicas == 0", "object.spec.replicas  ==  0")
    )
    (repo / ".gitmedic/rules/learned-zero-again.yaml").write_text(twin)
    shutil.copytree(
        repo / ".gitmedic/rules/cases/learned-zero-replicas",
        repo / ".gitmedic/rules/cases/learned-zero-again",
    )
    assert [str(p) for p in check_memory(repo)] == [
        ".gitmedic/rules/learned-zero-replicas.yaml: duplicates "
        ".gitmedic/rules/learned-zero-again.yaml (the same refines, reads and match): merge"
    ]


def test_a_python_detector_is_refused_with_the_migration_and_never_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = memory_repo(tmp_path)
    marker = tmp_path / "ran"
    legacy = repo / ".gitmedic/detectors/zero.py"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    assert [str(p) for p in check_memory(repo)] == [f".gitmedic/detectors/zero.py: {MIGRATION}"]
    assert main(["memory", "check", str(repo)]) == 1
    assert ".gitmedic/detectors/zero.py: Python learned detectors are no longer run" in (
        capsys.readouterr().out
    )
    assert not marker.exists()


def test_missing_playbooks_cases_and_index_entries_are_named(tmp_path: Path) -> None:
    repo = memory_repo(tmp_path)
    (repo / ".gitmedic/playbooks/README.md").write_text("nothing listed\n")
    (repo / ".gitmedic/rules/cases/learned-zero-replicas/post-fix.json").unlink()
    shutil.rmtree(repo / ".gitmedic/playbooks/scaled-to-zero-learned")
    messages = [str(p) for p in check_memory(repo)]
    assert (
        f"{RULE}: has no post-fix case "
        "(.gitmedic/rules/cases/learned-zero-replicas/post-fix.json)" in messages
    )
    assert f"{RULE}: names playbooks that do not exist: scaled-to-zero-learned" in messages


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
