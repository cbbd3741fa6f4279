"""The caller that waits, played by a test: the product's code steps and never sleeps.

Each step of the product answers when the next is due (the watcher's one question,
the verification window's one measurement, the transaction Runner's one action);
waiting is its caller's. :func:`step_until` is that caller for tests, and the one
loop the tests have over stepping code: it calls a step, advances the fake clock by
the wait the step asked for, and repeats. The three adapters below feed it the
product's steps exactly as the product takes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitmedic.reconciler.clock import Clock, FakeClock
from gitmedic.reconciler.oracles import Oracle
from gitmedic.reconciler.sync import SyncState, SyncWatcher
from gitmedic.reconciler.transaction import Journal, MachineConfig, Plan, Runner, TxnState, Verdict
from gitmedic.reconciler.transaction.ports import Ports
from gitmedic.reconciler.transaction.verify import OracleVerifier
from gitmedic.reconciler.transaction.window import Measurement, Stage

Advance = Callable[[float], None]  # moves the world on by that many seconds


def step_until(
    clock: Clock,
    step: Callable[[], float | None],
    *,
    advance: Advance | None = None,
    limit: int = 10_000,
) -> list[float]:
    """Call ``step`` until it returns None (done); any other return is the seconds to
    wait before the next call, by which ``advance`` (default: the clock's) moves time
    on. Returns the waits taken, in order (a step due at once waits nothing)."""
    if advance is None:
        assert isinstance(clock, FakeClock), "a clock other than a FakeClock needs advance="
        advance = clock.advance
    waits: list[float] = []
    for _ in range(limit):
        wait = step()
        if wait is None:
            return waits
        if wait < 0:
            raise AssertionError(f"a step asked to wait a negative time ({wait})")
        if wait > 0:
            advance(wait)
            waits.append(wait)
    raise AssertionError(f"not done within {limit} steps")


def polled(
    watcher: SyncWatcher,
    sha: str,
    clock: FakeClock,
    *,
    every: float,
    for_s: float,
    advance: Advance | None = None,
) -> list[SyncState]:
    """The watcher's one question about ``sha``, asked now and every ``every`` seconds
    until it answers Deployed or Failed or ``for_s`` seconds passed (the last wait cut
    to end there): every answer, in order."""
    until = clock.now() + for_s
    answers: list[SyncState] = []

    def ask() -> float | None:
        answers.append(watcher.check(sha))
        left = until - clock.now()
        return None if answers[-1].phase.terminal or left <= 0 else min(every, left)

    step_until(clock, ask, advance=advance)
    return answers


@dataclass(frozen=True)
class Window:
    """A verification window stepped to its verdict: the measurements it took."""

    verdict: Verdict
    measurements: tuple[Measurement, ...]
    waits: tuple[float, ...]

    @property
    def seconds(self) -> float:
        """From the first measurement to the last, on the clock."""
        return self.measurements[-1].at - self.measurements[0].at

    def marks(self, oracle: str) -> list[str]:
        """One oracle's phase at each measurement that measured it."""
        return [k.phase for m in self.measurements for k in m.marks if k.oracle == oracle]


WINDOW_PLAN = Plan(
    txn_id="window/1", app="app", incident="window", attempt=1, strategy="playbook",
    branch="gitmedic/window", title="a window", edits=(), base_sha="base", mu_pre=0.0,
    targets=(), auto_merge=True,
)  # fmt: skip


def window(
    oracles: Sequence[Oracle],
    clock: Clock,
    *,
    plan: Plan = WINDOW_PLAN,
    advance: Advance | None = None,
    restoring: bool = False,
) -> Window:
    """The verification window over ``oracles`` as the transaction takes it: each step
    judges the measurements taken so far (``OracleVerifier.window``) and, while it is
    open, takes the next measurement when it is due (``OracleVerifier.measure``)."""
    verifier = OracleVerifier(lambda: oracles, clock, lambda: ())
    taken: list[Measurement] = []
    verdicts: list[Verdict] = []

    def step() -> float | None:
        answer = verifier.window(plan, taken, restoring=restoring)
        if answer.verdict is not None:
            verdicts.append(answer.verdict)
            return None
        if answer.next_at > clock.now():
            return answer.next_at - clock.now()
        taken.append(verifier.measure("deployed", Stage.WINDOW, restoring=restoring))
        return 0.0

    waits = step_until(clock, step, advance=advance)
    return Window(verdicts[0], tuple(taken), tuple(waits))


@dataclass
class Stepped:
    """A transaction stepped by the Runner until a condition held."""

    state: TxnState
    waits: list[float] = field(default_factory=list)


def run_until(
    runner: Runner,
    txn_id: str,
    ports: Ports,
    until: Callable[[TxnState], bool],
    *,
    advance: Advance | None = None,
) -> Stepped:
    """``Runner.step`` until ``until`` holds of the state (or it is settled), waiting
    between steps what each answered."""
    states: list[TxnState] = []

    def step() -> float | None:
        advanced = runner.step(txn_id, ports)
        states.append(advanced.state)
        return None if until(advanced.state) or advanced.state.settled else advanced.wait_s

    waits = step_until(runner.clock, step, advance=advance)
    return Stepped(states[-1], waits)


def step_runner(
    runner: Runner,
    txn_id: str,
    ports: Ports,
    *,
    stop_for_person: bool = False,
    limit: int = 10_000,
) -> TxnState:
    """``Runner.until_wait`` until settled (or, with ``stop_for_person``, waiting for a
    person's approval), sleeping on the runner's clock for each wait the machine answers
    (the loop's ticks, played by the test)."""
    states: list[TxnState] = []

    def step() -> float | None:
        advanced = runner.until_wait(txn_id, ports)
        states.append(advanced.state)
        if advanced.state.settled or (stop_for_person and advanced.waiting_for_person):
            return None
        return advanced.wait_s

    step_until(runner.clock, step, advance=runner.clock.sleep, limit=limit)
    return states[-1]


def settle(
    journal: Journal,
    txn_id: str,
    ports: Ports,
    clock: Clock,
    config: MachineConfig | None = None,
    *,
    on_record: Callable[[TxnState], None] = lambda state: None,
) -> TxnState:
    """One transaction stepped to its end with a runner of its own."""
    return step_runner(Runner(journal, clock, config, on_record=on_record), txn_id, ports)


def settle_loop_txn(loop: Any, txn_id: str, ports: Ports | None = None) -> TxnState:
    """A loop's transaction stepped by the loop's runner until settled or waiting for a
    person, with its own ports (those of its plan unless given)."""
    if ports is None:
        ports = loop.txns.ports(plan=loop.journal.load(txn_id).plan)
    return step_runner(loop.txns.runner, txn_id, ports, stop_for_person=True)
