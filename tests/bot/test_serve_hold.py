"""A ``/gitmedic hold`` arriving while the monitor is mid-transaction is answered at the next step.

The monitor is paused inside one real step (the gate, on the forge's
``set_status``) until the hold command is queued on the shared lock; from then on
nothing is scripted: the step ends, the monitor yields, the command runs, and the
merge step that follows reads the hold. Before serve yielded its lock, the
command waited for the whole transaction, and the auto-merge went through.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.live_actions import LiveActions
from gitmedic.bot.service.lock import SharedLock
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.webhook.app import create_app
from gitmedic.bot.service.wiring import wire
from gitmedic.reconciler.forge import CommitStatus, Permission, PrState, StatusState
from gitmedic.reconciler.transaction import Journal, Phase, TxnState
from gitmedic.reconciler.transaction.forge_ports import HOLD_LABEL
from tests.bot.payloads import pr_comment
from tests.bot.service_kit import SECRET, Bot
from tests.bot.test_actions_live import World
from tests.bot.test_serve_lock import BOUND_S, wait_until
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo, plan


class PausingForge(LocalForge):
    """The local forge; its first gate status waits until a command queues on the lock."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.lock: SharedLock | None = None
        self.journal: Journal | None = None
        self.gating = threading.Event()
        self.phase_at_hold: Phase | None = None

    def set_status(
        self,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str | None = None,
    ) -> CommitStatus:
        lock = self.lock
        if lock is not None and not self.gating.is_set():
            self.gating.set()
            assert wait_until(lambda: lock.waiting > 0), "no command queued behind the monitor"
        return super().set_status(sha, context, state, description, target_url)

    def add_labels(self, number: int, labels: Iterable[str]) -> tuple[str, ...]:
        labels = tuple(labels)
        if HOLD_LABEL in labels and self.journal is not None:
            self.phase_at_hold = latest(self.journal).phase
        return super().add_labels(number, labels)


def latest(journal: Journal) -> TxnState:
    return journal.transactions()[-1]


def args() -> argparse.Namespace:
    return argparse.Namespace(forge="local", cluster="sim", interval=3600.0, path=APP,
                              namespace=NAMESPACE, watch=None)  # fmt: skip


@pytest.mark.integration
def test_serve_answers_a_hold_mid_transaction_and_the_fix_is_not_merged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)  # catalog's targetPort broken on main
    forge = PausingForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)
    settings = ServeSettings(SECRET, tmp_path / "state", repo)
    served = wire(settings, args(), {}, forge, repo, lambda: None)
    forge.lock, forge.journal = served.actions.lock, served.actions.journal
    loop = served.loop
    for _ in range(2):  # the finding persists, the incident opens and outlives its debounce
        loop.evaluate()
        loop.clock.sleep(loop.config.debounce_s + 1)
    with served.running(), TestClient(create_app(served.service)) as client:
        assert forge.gating.wait(60), "the monitor never reached the gate"
        (pr,) = forge.list_prs()
        bot = Bot(client, served.service)
        assert bot.post("issue_comment", pr_comment(pr.number, "maria", "/gitmedic hold", 7))
        bot.settle()
        assert wait_until(lambda: served.monitor.steps >= 1, 60), "the monitor step never ended"
    assert forge.phase_at_hold is Phase.GATED, "held between the gate and the merge"
    replies = [c.body for c in forge.list_comments(pr.number)]
    assert any(f"Holding #{pr.number}" in body for body in replies)
    state = latest(served.actions.journal)
    assert state.pr == pr.number and state.plan.auto_merge, "the policy allowed the merge"
    assert state.phase is Phase.AWAITING_APPROVAL and state.reason == "held by a person"
    assert forge.get_pr(pr.number).state is PrState.OPEN


def test_the_live_actions_yield_between_steps_to_a_hold(tmp_path: Path) -> None:
    world = World(tmp_path)
    forge = PausingForge(world.repo)
    world.ports.forge = world.actions.forge = forge  # the same repo, through the pausing forge
    forge.lock, forge.journal = world.actions.lock, world.journal
    world.journal.create(plan(world.repo, "good"), world.clock.now())  # auto-merge allowed

    def monitor() -> None:
        with world.actions.lock:
            world.tick()  # the loop's tick, yielding between its steps

    thread = threading.Thread(target=monitor, daemon=True)
    thread.start()
    assert forge.gating.wait(BOUND_S)
    pr = latest(world.journal).pr
    assert pr is not None
    reply = world.actions.hold(pr)  # blocks until the monitor's next step boundary
    thread.join(BOUND_S)
    assert not thread.is_alive() and reply.startswith(f"Holding #{pr}")
    assert forge.phase_at_hold is Phase.GATED
    state = latest(world.journal)
    assert state.phase is Phase.AWAITING_APPROVAL and state.reason == "held by a person"
    world.actions.unhold(pr)
    assert world.settle(state.plan.txn_id).phase is Phase.COMMITTED, "unhold lets it merge"


def test_a_monitor_step_without_commands_runs_the_transaction_through(tmp_path: Path) -> None:
    world = World(tmp_path)
    actions: LiveActions = world.actions
    state = world.start(plan(world.repo, "good"))
    assert state.phase is Phase.MERGED, "stepped until it waits for the sync"
    assert actions.lock.waiting == 0


@pytest.mark.integration
def test_serve_with_the_local_forge_reads_the_work_tree_of_a_plain_repo(tmp_path: Path) -> None:
    """``--forge local`` on an ordinary clone: the loop and the sim read the work tree,
    not the ``.git`` directory the local forge keeps its state in."""
    from gitmedic.bot.service.wiring import assemble

    repo = make_repo(tmp_path)
    served = assemble(ServeSettings(SECRET, tmp_path / "state", repo), args(), {})

    assert served.repo == repo
    served.loop.evaluate()
    assert served.loop.findings, "the broken targetPort of the work tree is seen"
    served.monitor.step()  # one monitor step records into the service's /metrics
    text = served.service.metrics.render().decode()
    assert "gitmedic_detector_evaluation_seconds_count 1.0" in text
    assert "gitmedic_incidents_open 1.0" in text
