"""The one runner: every transaction advances here, one step per call, resumable at any kill.

``run``, ``serve``, the comment commands and the tests all advance transactions
through :class:`Runner` (fixes, retries, requested reverts, memory PRs are all
transactions of the same machine). :meth:`Runner.step` loads the folded state
from the journal, asks the machine for exactly one action, persists its record
and returns; it never sleeps, not even in the verification window, which is one
journaled measurement per step (:mod:`~gitmedic.reconciler.transaction.window`).
How long to wait before the next step is the answer's ``wait_s``, and waiting
is the caller's: the loop's tick (:meth:`~gitmedic.bot.controller.loop.Loop.step`)
schedules the next step at that deadline and returns. As gitops-engine's sync does,
the state lives outside the process: a process killed at any point resumes from
the journal and repeats at most the one action whose record it had not written
(the ports make that repetition harmless).

One runner per process, and it steps only what this process may write: before each
step it asks ``may_step`` (wired to the app's writer lease), and a step it may not
take is refused: nothing is done or recorded, and the answer says why. A lease
lost between two steps (expired while a step ran long, taken over by another
replica) therefore stops the next step, not only the next tick.

A transaction is done when it is settled: terminal, and its outcome told
(the machine's announcing step), so "step until settled" includes the telling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.transaction.journal import Journal
from gitmedic.reconciler.transaction.machine import MachineConfig, advance
from gitmedic.reconciler.transaction.model import Phase, TxnState
from gitmedic.reconciler.transaction.ports import Ports


@dataclass(frozen=True)
class Advanced:
    """One step's answer: the state after it, and how long to wait before the next."""

    state: TxnState
    wait_s: float = 0.0
    recorded: bool = False  # a record was persisted (an action happened)
    refused: str = ""  # why the step was not taken (the writer lease is not held)

    @property
    def waiting_for_person(self) -> bool:
        return self.state.phase is Phase.AWAITING_APPROVAL and self.wait_s > 0


class Runner:
    def __init__(
        self,
        journal: Journal,
        clock: Clock,
        config: MachineConfig | None = None,
        *,
        on_record: Callable[[TxnState], None] = lambda state: None,
        may_step: Callable[[str], str] = lambda app: "",
    ) -> None:
        self.journal = journal
        self.clock = clock
        self.config = config or MachineConfig()
        self.on_record = on_record  # sees the state after each persisted record
        # Before each step, for the plan's app: "" when this process may write it (holds
        # its writer lease), else why not.
        self.may_step = may_step

    def step(self, txn_id: str, ports: Ports) -> Advanced:
        """Advance ``txn_id`` by at most one action (see the module docstring)."""
        state = self.journal.load(txn_id)
        refused = self.may_step(state.plan.app)
        if refused:
            return Advanced(state, self.config.poll_s, refused=refused)
        result = advance(state, ports, self.clock.now(), self.config)
        if result.record is None:
            return Advanced(state, result.wait_s)
        self.journal.append(txn_id, result.record)
        state = state.apply(result.record)
        self.on_record(state)
        return Advanced(state, 0.0, recorded=True)

    def until_wait(self, txn_id: str, ports: Ports) -> Advanced:
        """Step while an action was recorded; stop when settled, when the machine must wait
        (its ``wait_s``, a person's approval included) or when a step is refused (the lease).
        Never sleeps: the wait is the caller's, a deadline its tick schedules. Between two
        steps serve's commands get their turn through ``on_record`` (serve's events)."""
        while True:
            advanced = self.step(txn_id, ports)
            if advanced.state.settled or not advanced.recorded:
                return advanced
