"""``gitmedic run --once`` SIGKILLed at every journal phase and at random moments, restarted
until it exits: one PR per attempt, none left open, every merged change verified, main
never left on a regression, the outcome recorded and told once, every lock label gone.

Each chain kills one process per kill point: the first at its first write of that
phase, the restarted one at the next point, and so on, so one repo walks the fix
(and then its memory PR, whose phases come next under the same names) through
every phase with a kill right after the write and, in the ``before:`` chains,
right before it (the action done, its record not written). Deterministic kills
come from ``tests/support/killhook`` (a sitecustomize in the subprocess only);
the random ones right after a seeded operation of the run (any journal write or forge
call, so between two journal writes too), counted on a copy of the repo first.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.bot.kill_world import (
    KILLED,
    argv,
    check_promises,
    commit_fault,
    env,
    kill_at_random,
    kill_chain,
    regress_fault,
)
from tests.transaction.e2e_world import git

pytestmark = pytest.mark.integration
FIX = ["pr-opened", "gated", "merged", "synced", "committed", "announced"]
COMMIT_PATH = ["incident-open", *FIX, *FIX]  # the fix, then its memory PR
COMMIT_PATH_BEFORE = [
    f"before:{p}"
    for p in ("pr-opened", "gated", "merged", "committed", "announced", "pr-opened", "merged")
]
UNDO_PATH = [
    "merged",
    "undoing",
    "revert-opened",
    "reverted",
    "revert-synced",
    "restored",
    "announced",
    "pr-opened",
    "merged",
    "committed",
    # resolved, not yet verified healthy: the sim restarts from what the killed one knew
    "incident-resolved",
]
UNDO_PATH_BEFORE = [
    f"before:{p}" for p in ("undoing", "revert-opened", "reverted", "restored", "announced")
]


@pytest.mark.parametrize("kills", [COMMIT_PATH, COMMIT_PATH_BEFORE], ids=["after", "before"])
def test_a_fix_that_commits_survives_a_kill_at_every_phase(
    tmp_path: Path, kills: list[str]
) -> None:
    repo, healthy = commit_fault(tmp_path)
    codes = kill_chain(repo, kills)
    assert codes == [KILLED] * len(kills) + [0]
    check_promises(repo, healthy, attempts=1)


@pytest.mark.parametrize("kills", [UNDO_PATH, UNDO_PATH_BEFORE], ids=["after", "before"])
def test_a_first_candidate_that_regresses_is_undone_and_retried_through_every_kill(
    tmp_path: Path, kills: list[str]
) -> None:
    repo, healthy = regress_fault(tmp_path)
    kill_chain(repo, kills)
    check_promises(repo, healthy, attempts=2)
    assert git(repo, "log", "--format=%s", "main").count("Revert ") == 1


@pytest.mark.parametrize("seed", [11])
@pytest.mark.parametrize("fault", ["commits", "regresses"])
def test_a_kill_at_a_random_moment_is_resumed(tmp_path: Path, fault: str, seed: int) -> None:
    make = commit_fault if fault == "commits" else regress_fault
    repo, healthy = make(tmp_path)
    kill_at_random(repo, seed)  # a seeded operation of the run: inside it, on any machine
    check_promises(repo, healthy, attempts=1 if fault == "commits" else 2)


def test_two_runs_started_together_one_acts_the_other_names_the_holder(tmp_path: Path) -> None:
    repo, healthy = commit_fault(tmp_path)
    procs = [
        subprocess.Popen(
            argv(repo), env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 1], [err[-1500:] for _, _, err in done]
    (refused,) = [err for code, _, err in done if code == 1]
    assert "shop is held by " in refused and "another gitmedic acts on it" in refused
    holder = refused.split("shop is held by ")[1].split(" ")[0]
    _host, pid, token = holder.split(":")
    assert int(pid) in {p.pid for p in procs} and len(token) == 8
    check_promises(repo, healthy, attempts=1)
