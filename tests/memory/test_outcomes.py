"""The outcomes log only grows, one record per incident."""

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
