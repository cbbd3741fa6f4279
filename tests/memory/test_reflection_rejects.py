"""A rule that matches the incident, not the fault, is refused with the reason.

Today's failure mode of learned memory: a detector that matches the exact bad
value (or the incident's object name) never sees the same fault again, and each
miss adds a near-duplicate. The generalisation probe renames the implicated
object and gives the fixed fields other values; a rule must still fire.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.memory.architecture import ARCHITECTURE_PATH
from gitmedic.bot.memory.reflection import reflect
from gitmedic.bot.memory.validate import generalises
from gitmedic.detectors import Resource
from gitmedic.reconciler.manifests.edit import Edit, Op
from tests.memory.scenario import (
    MANIFESTS,
    NAMESPACE,
    healthy,
    incident,
    manifest_repo,
    with_value,
)

SELECTOR = ("spec", "selector", "app")
RULE = """\
id: learned-probe
description: probe
severity: warning
reads: [Service]
match: {match}
message: "{{name}}"
playbooks: [probe]
"""
WRONG = {
    "the exact bad value": (
        "has(object.spec.selector) && object.spec.selector.app == 'cartservice'",
        "does not fire when Service frontend and its containers are renamed and the fixed "
        "field holds another value",
    ),
    "the incident's object name": (
        "object.metadata.name == 'frontend' && has(object.spec.selector)",
        "does not fire when Service frontend",
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_rule_matching_the_incident_is_refused_by_the_probe(tmp_path: Path, case: str) -> None:
    match, reason = WRONG[case]
    repo = manifest_repo(tmp_path)
    base = healthy(repo)
    pre = with_value(base, "Service", "frontend", SELECTOR, "cartservice")
    svc = Resource("Service", NAMESPACE, "frontend", "v1")

    why, finding = generalises(RULE.format(match=f'"{match}"'), pre, svc, [SELECTOR])

    assert finding is None and reason in why


def test_a_rule_on_the_fault_class_passes_the_probe(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base = healthy(repo)
    pre = with_value(base, "Service", "frontend", SELECTOR, "cartservice")
    svc = Resource("Service", NAMESPACE, "frontend", "v1")
    match = "has(object.spec.selector) && has(object.spec.selector.app)"

    why, finding = generalises(RULE.format(match=f'"{match}"'), pre, svc, [SELECTOR])

    assert why == "" and finding is not None and finding.resource.name == "gitmedic-probe"


def test_without_a_valid_candidate_only_the_outcome_is_written(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base = healthy(repo)
    # The fault pointed the selector at another workload's label: a string value, and
    # one that names objects of the app, so no rule may match it.
    svc = Resource("Service", NAMESPACE, "frontend", "v1")
    inp = incident(base, pre=with_value(base, "Service", "frontend", SELECTOR, "cartservice"))
    inp = replace(inp, edits=(Edit(Op.SET, MANIFESTS, svc, SELECTOR, "frontend"),))

    change = reflect(repo, inp)

    # no rule: the outcome, and the architecture summary the repo lacks (pinned to the fix)
    assert list(change.files) == [".gitmedic/outcomes.jsonl", ARCHITECTURE_PATH]
    assert change.rule == "" and change.playbook == ""
    assert change.notes == (
        "template: every changed field holds a value a rule may not match",
        "no rule written: no candidate passed validation",
    )
