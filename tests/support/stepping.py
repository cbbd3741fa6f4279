"""Tests step a transaction to its end: the runner advances until it must wait, and the
test (never ``src``) passes the wait on its clock, as the loop's ticks would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.transaction import Journal, MachineConfig, Runner, TxnState
from gitmedic.reconciler.transaction.ports import Ports


def step_runner(
    runner: Runner,
    txn_id: str,
    ports: Ports,
    *,
    stop_for_person: bool = False,
    max_steps: int = 10_000,
) -> TxnState:
    """Advance until settled (or, with ``stop_for_person``, waiting for a person's
    approval), sleeping on the runner's clock for each wait the machine answers."""
    for _ in range(max_steps):
        advanced = runner.until_wait(txn_id, ports)
        if advanced.state.settled or (stop_for_person and advanced.waiting_for_person):
            return advanced.state
        runner.clock.sleep(advanced.wait_s)
    raise AssertionError(f"{txn_id} did not settle within {max_steps} waits")


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
