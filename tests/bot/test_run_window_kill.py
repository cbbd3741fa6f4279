"""``gitmedic run --once`` SIGKILLed inside the sync wait or the verification window: the
restart continues from the journaled measurements, never starts the window again.

A kill right after the ``n``-th window measurement was journaled (the killhook's
``measured-window@n``) leaves a window partly measured; the restarted process
takes only the measurements left, so the fix's window holds exactly as many as
the configured window has (``oracles.window_s / interval_s``), and the outcome
is recorded once. A kill inside the fail-fast streak of a candidate that crash-
loops (``measured-sync@n``) is resumed too: the candidate is still undone long
before the sync timeout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.config import OracleConfig
from gitmedic.reconciler.transaction import Phase
from gitmedic.reconciler.transaction.window import Stage
from tests.bot.kill_world import (
    KILLED,
    check_promises,
    commit_fault,
    kill_chain,
    regress_fault,
    transactions,
)

pytestmark = pytest.mark.integration
WINDOW = int(OracleConfig().window_s // OracleConfig().interval_s)  # no config file: defaults


def test_a_kill_inside_the_window_continues_it_from_the_recorded_measurements(
    tmp_path: Path,
) -> None:
    repo, healthy = commit_fault(tmp_path)
    assert kill_chain(repo, ["measured-window@3"]) == [KILLED, 0]
    check_promises(repo, healthy, attempts=1)
    (fix,) = [t for t in transactions(repo) if t.plan.strategy != "memory"]
    window = fix.measured(Stage.WINDOW, fix.merge_sha)
    assert len(window) == WINDOW, "3 before the kill, the rest after it: the window once"
    assert [m.at for m in window] == sorted(m.at for m in window)
    committed = [r for r in fix.records if r.phase is Phase.COMMITTED]
    assert [bool(r.data.get("announced")) for r in committed] == [False, True]


def test_a_kill_inside_the_fail_fast_streak_still_undoes_before_the_sync_timeout(
    tmp_path: Path,
) -> None:
    repo, healthy = regress_fault(tmp_path)
    assert kill_chain(repo, ["measured-sync@2"]) == [KILLED, 0]
    check_promises(repo, healthy, attempts=2)
    first = next(t for t in transactions(repo) if t.plan.attempt == 1)
    assert first.reason.startswith("failed fast: pod-crashloop Deployment/shop/catalog")
    merged = next(r for r in first.records if r.phase is Phase.MERGED)
    undone = next(r for r in first.records if r.phase is Phase.UNDOING)
    assert merged.at < undone.at < merged.at + 120, "undone at the streak, not at the timeout"
