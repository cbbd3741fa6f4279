"""The one runner steps only while the app's writer lease is held, checked before each step."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import Journal, MachineConfig, Phase, Runner
from tests.transaction.fakes import World, plan

CONFIG = MachineConfig(sync_timeout_s=300, poll_s=10, approval_poll_s=60)


def test_a_runner_whose_lease_was_lost_between_two_steps_records_nothing_more(
    tmp_path: Path,
) -> None:
    clock = FakeClock(1000.0)
    world = World(clock)
    journal = Journal(tmp_path / "journal.sqlite")
    p = plan()
    journal.create(p, clock.now())
    held = {p.app: True}
    asked: list[str] = []

    def may_step(app: str) -> str:
        asked.append(app)
        return "" if held[app] else f"{app}'s writer lease is held by replica-2"

    runner = Runner(journal, clock, CONFIG, may_step=may_step)
    first = runner.step(p.txn_id, world)
    assert first.recorded and first.state.phase is Phase.PR_OPENED
    held[p.app] = False  # taken over between two steps
    refused = runner.step(p.txn_id, world)
    assert (
        not refused.recorded and refused.refused == f"{p.app}'s writer lease is held by replica-2"
    )
    assert refused.state.phase is Phase.PR_OPENED
    assert runner.until_wait(p.txn_id, world).refused, "nor does stepping until it waits"
    assert len(journal.load(p.txn_id).records) == 1, "nothing more recorded"
    assert world.calls == ["open_pr"], "and nothing done through the ports"
    assert asked == [p.app] * 3, "asked before each step, for the plan's app"
    held[p.app] = True  # taken back: the transaction carries on from its journal
    assert runner.step(p.txn_id, world).state.phase is Phase.GATED
