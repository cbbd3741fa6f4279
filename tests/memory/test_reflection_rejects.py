"""A wrong LLM-written detector is refused with the reason, and the templated form takes over."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.reflection import LlmConfig, app_names, reflect
from gitmedic.detectors import Resource
from gitmedic.reconciler.manifests.edit import Edit, Op
from tests.memory.scenario import (
    LLM_DETECTOR,
    LLM_PLAYBOOK,
    MANIFESTS,
    NAMESPACE,
    apply_change,
    healthy,
    incident,
    llm_writes,
    manifest_repo,
    with_value,
)

TEMPLATED = "service-publish-not-ready-addresses"
WRONG = {
    "fires on the healthy snapshot": (
        LLM_DETECTOR.replace('.get("publishNotReadyAddresses") is True', '.get("ports")'),
        "fires on its healthy snapshot",
    ),
    "matches the incident's object name": (
        LLM_DETECTOR.replace("is True:", 'is True and svc.name == "frontend":'),
        "does not fire when Service frontend and its containers are renamed",
    ),
    "names a playbook that does not exist": (
        LLM_DETECTOR.replace('("service-publishes-not-ready",)', '("no-such-playbook",)'),
        "names playbooks that do not exist: no-such-playbook",
    ),
    "imports os": ("import os\n" + LLM_DETECTOR, "LLM detector refused: detector.py:1: imports os"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrong_llm_detector_falls_back_to_the_template(tmp_path: Path, case: str) -> None:
    source, reason = WRONG[case]
    repo = manifest_repo(tmp_path)
    inp = incident(healthy(repo))

    change = reflect(repo, inp, llm=LlmConfig("m", llm_writes(source)))

    assert any(reason in note for note in change.notes), change.notes
    assert change.playbook == TEMPLATED
    assert not any("service_publishes_not_ready" in path for path in change.files)
    apply_change(repo, change.files)
    assert check_memory(repo, app_names=app_names(inp.snapshots)) == []


def test_a_playbook_naming_the_apps_objects_is_refused(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    literal = LLM_PLAYBOOK.replace(
        'paths: ["spec.publishNotReadyAddresses"]', 'paths: ["metadata.labels.frontend"]'
    )
    change = reflect(
        repo, incident(healthy(repo)), llm=LlmConfig("m", llm_writes(LLM_DETECTOR, literal))
    )
    assert any("names objects literally (frontend); use placeholders" in n for n in change.notes)
    assert change.playbook == TEMPLATED


@pytest.mark.integration
@pytest.mark.parametrize(
    ("loop", "reason"),
    [
        ("    while True:\n        pass\n", "ran past its time limit"),
        ("    hoard = []\n    while True:\n        hoard.append('x' * 10**7)\n", "memory limit"),
    ],
    ids=["loops forever", "allocates without bound"],
)
def test_a_runaway_llm_detector_is_stopped_and_refused(
    tmp_path: Path, loop: str, reason: str
) -> None:
    repo = manifest_repo(tmp_path)
    source = LLM_DETECTOR.replace("def detect(snapshot):\n", "def detect(snapshot):\n" + loop)
    change = reflect(repo, incident(healthy(repo)), llm=LlmConfig("m", llm_writes(source)))
    assert any(reason in note for note in change.notes), change.notes
    assert change.playbook == TEMPLATED


def test_without_a_valid_candidate_only_the_outcome_is_written(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base = healthy(repo)
    # The fault pointed the selector at another workload's label: both values name
    # objects of the app, so no rule may be templated; the LLM wrote nothing usable.
    path = ("spec", "selector", "app")
    svc = Resource("Service", NAMESPACE, "frontend", "v1")
    inp = incident(base, pre=with_value(base, "Service", "frontend", path, "cartservice"))
    inp = replace(inp, edits=(Edit(Op.SET, MANIFESTS, svc, path, "frontend"),))

    change = reflect(repo, inp, llm=LlmConfig("m", llm_writes("x = 1\n")))

    assert list(change.files) == [".gitmedic/outcomes.jsonl"]
    assert change.detector == "" and change.playbook == ""
    assert change.notes == (
        "LLM detector refused: detector.py: defines no detect(snapshot) function; "
        "detector.py: defines no SPEC = DetectorSpec(...)",
        "LLM: wrote no usable detector and playbook (diagnosis)",
        "template: every changed value names an object or may be a credential",
        "no detector written: no candidate passed validation",
    )
