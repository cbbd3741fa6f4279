"""A novel fault is learned as a CEL rule; the same fault on another object then costs nothing.

The whole path on a real app in a real repo: reflection writes memory (a templated
rule, validated by the guard), the memory passes ``check_memory``, the learned rule
loaded as data finds the fault on a *different* Service, the learned playbook routes
and binds that finding, and restoring the bound field from Git history gives back
the original file byte for byte. The same fault class learned again is merged into
the rule, not added beside it; a credential's presence is never learned as a fault.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from gitmedic.bot.memory.architecture import ARCHITECTURE_PATH
from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.learned import load_learned
from gitmedic.bot.memory.outcomes import read_outcomes
from gitmedic.bot.memory.reflection import app_names, reflect
from gitmedic.bot.responder.playbooks import bind, builtin_playbooks, repo_playbooks, route
from gitmedic.detectors import Resource, Severity, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.history import restore_fields
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.memory.scenario import (
    FIELD,
    MANIFESTS,
    NAMESPACE,
    apply_change,
    commit_all,
    healthy,
    incident,
    manifest_repo,
    with_value,
)

LEARNED = "service-publish-not-ready-addresses"
RULE = f".gitmedic/rules/learned-{LEARNED}.yaml"


def test_the_same_fault_on_another_object_is_fixed_by_the_learned_playbook(
    tmp_path: Path,
) -> None:
    repo = manifest_repo(tmp_path)
    original = (repo / MANIFESTS).read_text()
    inp = incident(healthy(repo))  # fixed by the LLM: reflection itself asks nothing

    change = reflect(repo, inp)

    assert change.notes == ()
    assert (change.playbook, change.rule, change.merged) == (LEARNED, RULE, False)
    assert change.branch == "gitmedic/inc-1/memory"
    assert all(path.startswith(".gitmedic/") for path in change.files)
    assert not [p for p in change.files if p.endswith(".py")]
    rule = change.files[RULE]
    match = yaml.safe_load(rule)["match"]
    assert "frontend" not in rule and "object.spec.publishNotReadyAddresses == true" in match
    apply_change(repo, change.files)
    assert check_memory(repo, app_names=app_names(inp.snapshots)) == []
    before_memory = commit_all(repo, "memory")

    cart = Resource("Service", NAMESPACE, "cartservice", "v1")
    ManifestRepo(repo, namespace=NAMESPACE).apply([Edit(Op.INSERT, MANIFESTS, cart, FIELD, True)])
    commit_all(repo, "cartservice: publish not-ready addresses")

    learned = load_learned(repo, builtin_registry())
    assert learned.refused == ()
    evaluation = run_detectors(learned.registry, healthy(repo))
    assert evaluation.errors == ()
    found = [f for f in evaluation.findings if f.detector == f"learned-{LEARNED}"]
    assert [f.resource for f in found] == [cart]

    books = route([*builtin_playbooks(), *repo_playbooks(repo)], found[0])
    assert [b.id for b in books] == [LEARNED]
    fix = bind(books[0], found[0])
    assert fix.target == cart and fix.paths == ("spec.publishNotReadyAddresses",)
    manifests = ManifestRepo(repo, namespace=NAMESPACE)
    edits = restore_fields(manifests, fix.target, [parse_path(p) for p in fix.paths], before_memory)
    manifests.apply(edits)
    assert (repo / MANIFESTS).read_text() == original


def test_the_outcome_is_appended_with_the_memory_it_wrote(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    change = reflect(repo, incident(healthy(repo)))
    apply_change(repo, change.files)
    [record] = read_outcomes(repo)
    assert record.id == "inc-1" and record.strategy == "llm"
    assert record.tokens == 5200  # the fix's tokens: reflection spends none
    assert record.memory == (RULE, LEARNED)


def test_the_same_fault_class_learned_again_is_merged_into_the_rule_not_added(
    tmp_path: Path,
) -> None:
    repo = manifest_repo(tmp_path)
    apply_change(repo, reflect(repo, incident(healthy(repo))).files)
    commit_all(repo, "memory")
    rules_before = sorted(p.name for p in (repo / ".gitmedic/rules").glob("*.yaml"))
    # Another Service, another incident, a worse symptom: the same fault class.
    again = incident(healthy(repo), name="cartservice")
    worse = replace(again, incident="inc-2", outcome=replace(again.outcome, id="inc-2"))

    change = reflect(repo, worse)

    assert change.merged and change.rule == RULE and change.playbook == ""
    assert any(f"merged into {RULE}" in note for note in change.notes), change.notes
    assert sorted(change.files) == [".gitmedic/outcomes.jsonl"]  # same severity: nothing to merge
    assert change.title == "gitmedic memory: inc-2 confirms learned-" + LEARNED
    apply_change(repo, change.files)
    assert sorted(p.name for p in (repo / ".gitmedic/rules").glob("*.yaml")) == rules_before
    assert check_memory(repo, app_names=app_names(worse.snapshots)) == []


def test_a_merge_raises_the_rules_severity_to_the_worse_one(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    first = incident(healthy(repo))
    mild = replace(
        first, findings=tuple(replace(f, severity=Severity.WARNING) for f in first.findings)
    )
    apply_change(repo, reflect(repo, mild).files)
    assert "severity: warning" in (repo / RULE).read_text()
    commit_all(repo, "memory")

    again = incident(healthy(repo), name="cartservice")
    change = reflect(
        repo, replace(again, incident="inc-2", outcome=replace(again.outcome, id="inc-2"))
    )

    assert change.merged and "severity: critical" in change.files[RULE]


def test_a_fix_that_removed_a_password_variable_learns_no_rule_flagging_it(
    tmp_path: Path,
) -> None:
    # The fault's commit added DB_PASSWORD with the bad value; the fix removed the variable.
    # "Any workload with DB_PASSWORD is critical" would pass the incident's own cases and
    # then flag every healthy app that has a database: it is never learned.
    repo = manifest_repo(tmp_path)
    base = healthy(repo)
    ref = Resource("Deployment", NAMESPACE, "cartservice", "apps/v1")
    containers = ("spec", "template", "spec", "containers")
    body = base.get("Deployment", NAMESPACE, "cartservice")
    assert body is not None
    fixed = body.body["spec"]["template"]["spec"]["containers"]
    broken = [
        {
            **fixed[0],
            "env": [*fixed[0].get("env", []), {"name": "DB_PASSWORD", "value": "wrong-value-1"}],
        }
    ]
    pre = with_value(base, "Deployment", "cartservice", containers, broken)
    inp = replace(
        incident(base, pre=pre, strategy="bisect"),
        edits=(Edit(Op.SET, MANIFESTS, ref, containers, fixed),),
    )

    change = reflect(repo, inp)

    assert change.rule == "" and change.playbook == ""
    # the outcome, and the architecture summary the repo lacks (pinned to the fix)
    assert list(change.files) == [".gitmedic/outcomes.jsonl", ARCHITECTURE_PATH]
    assert "no rule written: no candidate passed validation" in change.notes


def test_a_covered_or_failed_fix_writes_only_the_outcome(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base = incident(healthy(repo), strategy="playbook")
    covered = replace(base.outcome, playbooks=("x",), playbooks_applied=("x",))
    reverted = replace(base.outcome, status="reverted")
    # A committed fix also pins the architecture summary the repo lacks (to its merge).
    for record, reason, summary in (
        (covered, "the playbook x already covers this fault", [ARCHITECTURE_PATH]),
        (reverted, "the transaction ended reverted", []),
    ):
        change = reflect(repo, replace(base, outcome=record))
        assert list(change.files) == [".gitmedic/outcomes.jsonl", *summary]
        assert reason in change.notes[0] and change.rule == ""
        assert change.title == "gitmedic memory: record the outcome of inc-1"
