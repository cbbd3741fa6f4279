"""The outcomes log only grows, one record per incident; refinement signals come from it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.outcomes import (
    OUTCOMES_PATH,
    OutcomeError,
    appended,
    outcome_change,
    parse_outcomes,
    read_outcomes,
)
from gitmedic.bot.memory.signals import (
    DETECTOR_UNHELPED,
    PLAYBOOK_LLM_ONLY,
    refinement_signals,
    render_signals,
)
from tests.memory.scenario import commit_all, outcome


def test_appending_keeps_the_old_log_as_a_prefix_and_the_guard_agrees(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for number in (1, 2):
        change = outcome_change(repo, outcome(f"inc-{number}"))
        before = (repo / OUTCOMES_PATH).read_text() if number > 1 else ""
        assert change[OUTCOMES_PATH].startswith(before)
        (repo / OUTCOMES_PATH).parent.mkdir(parents=True, exist_ok=True)
        (repo / OUTCOMES_PATH).write_text(change[OUTCOMES_PATH])
        assert check_memory(repo, base_rev="HEAD" if number > 1 else None) == []
        commit_all(repo, f"outcome {number}")
    assert [r.id for r in read_outcomes(repo)] == ["inc-1", "inc-2"]
    line = json.loads((repo / OUTCOMES_PATH).read_text().splitlines()[0])
    keys = {"id", "commits", "detectors", "playbooks", "strategy", "classification", "tokens"}
    keys |= {"cost_usd", "opened_at", "closed_at", "playbooks_applied", "status"}
    assert keys <= set(line)


def test_one_record_per_incident_and_bad_records_are_refused() -> None:
    log = appended("", outcome("inc-1"))
    with pytest.raises(OutcomeError, match="'inc-1' is already in"):
        appended(log, outcome("inc-1"))
    with pytest.raises(OutcomeError, match="strategy 'guess' is not one of"):
        outcome(strategy="guess")
    with pytest.raises(OutcomeError, match="playbooks_applied must be among the playbooks"):
        outcome(playbooks_applied=("x",))
    with pytest.raises(OutcomeError, match="line 2: "):
        parse_outcomes(log + "{broken\n")
    # A log without a final newline still only grows.
    assert appended(log.rstrip("\n"), outcome("inc-2")).startswith(log)


def test_refinement_signals_from_a_crafted_log() -> None:
    records = [
        # noisy-detector fired twice; its playbook never produced the kept change.
        outcome("a", detectors=("noisy-detector",), playbooks=("noisy-book",), strategy="llm"),
        outcome("b", detectors=("noisy-detector",), strategy="bisect"),
        # good-detector's playbook helped once: no signal.
        outcome(
            "c",
            detectors=("good-detector",),
            playbooks=("good-book",),
            playbooks_applied=("good-book",),
            strategy="playbook",
        ),
        outcome("d", detectors=("good-detector",), strategy="llm"),
        # a playbook applied but then reverted did not help.
        outcome(
            "e",
            detectors=("reverted-detector",),
            playbooks=("r",),
            playbooks_applied=("r",),
            strategy="playbook",
            status="reverted",
        ),
        outcome("f", detectors=("reverted-detector",), strategy="playbook", status="failed"),
        # llm-book was surfaced twice and only the LLM ever used it; noisy-book once only.
        outcome("g", detectors=("x",), playbooks=("llm-book",), strategy="llm", tokens=100),
        outcome("h", detectors=("y",), playbooks=("llm-book",), strategy="llm", tokens=50),
    ]
    signals = refinement_signals(records)
    assert [(s.kind, s.subject, s.incidents) for s in signals] == [
        (DETECTOR_UNHELPED, "noisy-detector", ("a", "b")),
        (DETECTOR_UNHELPED, "reverted-detector", ("e", "f")),
        (PLAYBOOK_LLM_ONLY, "llm-book", ("g", "h")),
    ]
    assert "every one handled by the LLM (150 tokens)" in signals[2].reason
    assert render_signals(signals).count("- [ ] `") == 3
    assert refinement_signals(records[:1]) == []  # one incident is not a pattern
