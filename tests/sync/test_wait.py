"""The sync wait, as the product runs it: the transaction Runner asks the engine once per
step after the merge, stops on a verdict, and gives up exactly at the sync timeout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.sync import SyncPhase, SyncState
from gitmedic.reconciler.transaction import Journal, MachineConfig, Phase, Runner, TxnState
from tests.support.stepping import Stepped, run_until
from tests.transaction.fakes import World, plan

P, D, F, U = SyncPhase.PROGRESSING, SyncPhase.DEPLOYED, SyncPhase.FAILED, SyncPhase.UNKNOWN


class Scripted(World):
    """The engine answers by the seconds since the merge (``phases``: from that second on,
    that phase); every question is logged with the clock time it was asked at."""

    def __init__(self, clock: FakeClock, phases: dict[float, SyncPhase]) -> None:
        super().__init__(clock)
        self.phases = phases
        self.asked: list[float] = []

    def sync_status(self, sha: str) -> SyncState:
        now = self.clock.now()
        self.asked.append(now)
        since = now - self.deployed[sha]
        phase = self.phases[max(t for t in self.phases if t <= since)]
        return SyncState(phase, f"{phase.value} at {since:g}", sha, now)

    def polls(self) -> list[float]:
        """The distinct moments the engine was asked at, since the merge (a step that
        records a sync measurement is followed at once by one that asks again)."""
        start = self.deployed["merge-1"]
        return sorted({t - start for t in self.asked})


def _sync_wait(
    tmp_path: Path, world: Scripted, *, timeout: float, poll: float
) -> tuple[Stepped, TxnState]:
    """Step a fix through its merge, then through its sync wait until it leaves it."""
    journal = Journal(tmp_path / "j.sqlite")
    p = plan()
    journal.create(p, world.clock.now())
    runner = Runner(journal, world.clock, MachineConfig(sync_timeout_s=timeout, poll_s=poll))
    merged = run_until(runner, p.txn_id, world, lambda s: s.phase is Phase.MERGED)
    assert merged.waits == [], "the fix is opened, gated and merged without a wait"
    done = run_until(runner, p.txn_id, world, lambda s: s.phase is not Phase.MERGED)
    return done, merged.state


def _waited(done: Stepped, merged: TxnState) -> float:
    assert merged.merged_at is not None
    return done.state.records[-1].at - merged.merged_at


def test_deployed_on_the_third_poll(tmp_path: Path) -> None:
    world = Scripted(FakeClock(1000.0), {0: P, 10: U, 20: D})
    done, merged = _sync_wait(tmp_path, world, timeout=300, poll=10)
    assert done.state.phase is Phase.SYNCED
    assert world.polls() == [0, 10, 20]
    assert _waited(done, merged) == 20 and done.waits == [10, 10]


def test_timeout_is_exact_and_the_last_wait_is_cut_short(tmp_path: Path) -> None:
    world = Scripted(FakeClock(), {0: P})
    done, merged = _sync_wait(tmp_path, world, timeout=100, poll=30)
    assert done.state.phase is Phase.UNDOING
    assert _waited(done, merged) == 100 and world.clock.now() == 100
    assert done.waits == [30, 30, 30, 10]
    assert world.polls() == [0, 30, 60, 90, 100]
    assert done.state.reason == "merge-1 not deployed after 100s"


def test_failed_ends_the_wait_at_once(tmp_path: Path) -> None:
    world = Scripted(FakeClock(), {0: P, 5: F})
    done, merged = _sync_wait(tmp_path, world, timeout=600, poll=5)
    assert done.state.phase is Phase.UNDOING
    assert done.state.reason == "sync of merge-1 failed: Failed at 5"
    assert done.waits == [5] and _waited(done, merged) == 5


def test_unknown_is_asked_again_until_the_deadline(tmp_path: Path) -> None:
    world = Scripted(FakeClock(), {0: U})
    done, merged = _sync_wait(tmp_path, world, timeout=60, poll=15)
    assert done.state.phase is Phase.UNDOING and _waited(done, merged) == 60
    assert world.polls() == [0, 15, 30, 45, 60]
    assert world.clock.now() == 60


def test_zero_timeout_asks_once(tmp_path: Path) -> None:
    world = Scripted(FakeClock(), {0: P})
    done, merged = _sync_wait(tmp_path, world, timeout=0, poll=5)
    assert world.asked == [0] and done.state.phase is Phase.UNDOING and done.waits == []
    assert _waited(done, merged) == 0


def test_a_slow_question_counts_against_the_timeout(tmp_path: Path) -> None:
    class Slow(Scripted):
        def sync_status(self, sha: str) -> SyncState:
            self.clock.advance(7)  # e.g. an HTTP request that took 7 s
            return super().sync_status(sha)

    world = Slow(FakeClock(), {0: P})
    done, merged = _sync_wait(tmp_path, world, timeout=20, poll=5)
    # Each step reads the clock before it asks, and the time a question took is on the
    # clock at the next step: asked at 7 (recorded as the first poll), 14 (the next poll
    # is due 5 s after the poll measured at 7), then at 26 after a 5 s wait, 33 after
    # none: the step at 26 saw the deadline passed. The waits never pass the deadline;
    # the question in flight at it is finished.
    assert world.asked == [7, 14, 26, 33] and done.waits == [5]
    assert done.state.phase is Phase.UNDOING and _waited(done, merged) == 26


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: MachineConfig(sync_timeout_s=10, poll_s=0), "poll_s > 0"),
        (lambda: MachineConfig(sync_timeout_s=-1, poll_s=1), "sync_timeout_s >= 0"),
    ],
)
def test_bad_arguments_are_refused(make: Callable[[], MachineConfig], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make()
