"""One controller that never waits: a tick advances the fix until it must wait and returns,
so a comment command is answered within one tick while the fix is in its verification window.

Before, the tick that started a transaction drove it to its end (PR, gate, merge, sync
wait, the whole verification window) inside one call, sleeping on the clock.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.live_actions import LiveActions
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.webhook.app import create_app
from gitmedic.bot.service.wiring import MonitorThread, wire
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.forge import Permission
from gitmedic.reconciler.transaction import Journal, LockGrant, Outcome, Phase, TxnState
from tests.bot.payloads import pr_comment
from tests.bot.service_kit import SECRET, Bot
from tests.bot.test_serve_lock import wait_until
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

TICKS = 400  # bound on every loop below: a hang fails instead


class NoSleep:
    """The loop's clock: the sim's time, which a tick may read but never sleep on."""

    def __init__(self, inner: Clock) -> None:
        self.inner = inner

    def now(self) -> float:
        return self.inner.now()

    def sleep(self, seconds: float) -> None:
        raise AssertionError(f"a tick slept {seconds} s")


def fix_of(journal: Journal) -> TxnState | None:
    fixes = [t for t in journal.transactions() if t.plan.strategy != "memory"]
    return fixes[0] if fixes else None


def test_a_tick_returns_with_the_fix_in_its_window_and_the_next_ticks_finish_it(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)  # catalog's targetPort broken on main
    cluster = SimCluster(repo, APP, NAMESPACE)
    sim = cluster.clock  # sleeping it runs the sim: only the test passes time
    cluster.clock = NoSleep(sim)  # type: ignore[assignment]
    config = LoopConfig("shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY,
                        interval_s=60.0, window_s=60.0)  # fmt: skip
    loop = Loop(config, cluster, LocalForge(repo), Journal(tmp_path / "j.sqlite"),
                builtin_registry())  # fmt: skip

    def tick() -> tuple[TxnState | None, float]:
        before = loop.clock.now()
        loop.step()
        assert loop.clock.now() == before, "the tick moved time"
        wait = loop.next_due() - loop.clock.now()
        assert wait > 0, "something is due at once: the tick left work undone"
        sim.sleep(wait)  # what run's tick does between two steps
        return fix_of(loop.journal), wait

    in_window = 0
    for _ in range(TICKS):
        fix, wait = tick()
        if fix is not None and fix.phase is Phase.SYNCED:
            in_window += 1
            assert wait <= config.oracle_interval_s, "the window's next measurement, on time"
        if fix is not None and fix.settled:
            break
    assert fix is not None and fix.settled and fix.outcome is Outcome.COMMITTED, fix
    # the window (60 s, a measurement every 10 s) was ticked through, not slept through
    assert in_window >= 3, f"returned {in_window} time(s) in the window"


@pytest.mark.integration
def test_a_comment_command_is_answered_within_one_tick_during_a_verification_window(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)
    args = argparse.Namespace(forge="local", cluster="sim", interval=30.0, path=APP,
                              namespace=NAMESPACE, watch=None)  # fmt: skip
    served = wire(ServeSettings(SECRET, tmp_path / "state", repo), args, {}, forge, repo,
                  lambda: None)  # fmt: skip
    journal = served.actions.journal
    for _ in range(TICKS):  # monitor ticks alone, on the sim's fake clock
        served.monitor.step_once()
        fix = fix_of(journal)
        if fix is not None and (fix.settled or fix.phase is Phase.SYNCED):
            break
    assert fix is not None and fix.phase is Phase.SYNCED, "a tick returned mid-window"
    assert fix.pr is not None
    lock = served.actions.lock
    with TestClient(create_app(served.service)) as client:
        bot = Bot(client, served.service)
        with lock:  # a tick in progress when the comment comes
            comment = pr_comment(fix.pr, "maria", "/gitmedic explain", 7)
            assert bot.post("issue_comment", comment)
            assert wait_until(lambda: lock.waiting == 1), "the command queued behind the tick"

        served.monitor.step_once()  # ONE tick

        replies = [c.body for c in forge.list_comments(fix.pr) if "Transaction `" in c.body]
        assert replies, "answered before the next tick started"
        bot.settle()
    after = journal.load(fix.plan.txn_id)
    assert not after.settled and after.phase is Phase.SYNCED, "the window goes on"


def test_the_monitor_thread_waits_until_the_next_tick_is_due_never_past_the_interval() -> None:
    due = [5.0]
    monitor = MonitorThread(lambda: None, 60.0, threading.Lock(), pause=lambda: due[0])
    assert monitor.wait_s() == 5.0, "a transaction's deadline comes first"
    due[0] = 600.0
    assert monitor.wait_s() == 60.0
    due[0] = -3.0  # overdue: at once
    assert monitor.wait_s() == 0.0
    assert monitor.wait_s(ok=False) == 60.0, "a failed tick waits the interval"


def test_a_revert_asked_during_a_verification_window_is_answered_at_once_and_opened_next_tick(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)  # catalog's targetPort broken on main
    forge = LocalForge(repo)
    person = human_merge(repo, forge)  # before the loop starts: a person's change to revert
    cluster = SimCluster(repo, APP, NAMESPACE)
    sim = cluster.clock
    cluster.clock = NoSleep(sim)  # type: ignore[assignment]
    config = LoopConfig(
        "shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY, interval_s=60.0, window_s=60.0
    )
    loop = Loop(config, cluster, forge, Journal(tmp_path / "j.sqlite"), builtin_registry())
    actions = LiveActions(
        forge, loop.journal, loop.ports, loop.clock, app="shop", mu_now=loop.mu_now
    )
    fix = None
    for _ in range(TICKS):
        loop.step()
        fix = fix_of(loop.journal)
        if fix is not None and fix.phase is Phase.SYNCED:
            break
        sim.sleep(loop.next_due() - loop.clock.now())
    assert fix is not None and fix.phase is Phase.SYNCED, "the fix is in its window"
    before = loop.clock.now()
    reply = actions.revert(person)  # answered at once: nothing stepped, no time passed
    assert f"opens the PR that reverts #{person} at its next tick" in reply
    assert loop.clock.now() == before and forge.find_prs({"reverts": person}) == ()
    assert loop.journal.load(fix.plan.txn_id).records == fix.records, "the fix did not move"
    loop.step()  # the next tick
    (revert,) = forge.find_prs({"reverts": person})
    told = [c.body for c in forge.list_comments(person) if c.topic == "revert"]
    assert len(told) == 1 and f"Opened #{revert.number} to revert #{person}." in told[0]
    assert loop.journal.load(fix.plan.txn_id).phase is Phase.SYNCED, "its window goes on"


def human_merge(repo: Path, forge: LocalForge) -> int:
    """bob's harmless change to the app (one more cart replica), merged by him."""
    git(repo, "checkout", "-qb", "bob/cart")
    path = repo / APP / "cart.yaml"
    path.write_text(path.read_text().replace("replicas: 1", "replicas: 2", 1))
    git(repo, "commit", "-qam", "cart: two replicas")
    git(repo, "checkout", "-q", "main")
    pr = forge.open_pr_as("bob", "bob/cart", "main", "Two cart replicas", "")
    forge.merge(pr.number, pr.head_sha)
    return pr.number


class Switch:
    """A writer lease a test takes away: held until ``lost``, then another replica's."""

    holder = "this-process"

    def __init__(self) -> None:
        self.lost = False
        self.holds = 0

    def hold(self) -> LockGrant:
        self.holds += 1
        return LockGrant(False, "replica-2") if self.lost else LockGrant(True, self.holder)

    def release(self) -> None:
        pass


def test_the_loops_runner_refuses_a_step_once_the_lease_is_lost_mid_tick(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    cluster = SimCluster(repo, APP, NAMESPACE)
    sim = cluster.clock
    config = LoopConfig(
        "shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY, interval_s=60.0, window_s=60.0
    )
    lease = Switch()
    journal = Journal(tmp_path / "j.sqlite")
    loop = Loop(config, cluster, LocalForge(repo), journal, builtin_registry(), lease=lease)
    fix = None
    for _ in range(TICKS):
        loop.step()
        fix = fix_of(loop.journal)
        if fix is not None and not fix.settled:
            break
        sim.sleep(loop.next_due() - loop.clock.now())
    assert fix is not None and not fix.settled, "a fix in flight"
    sim.sleep(loop.next_due() - loop.clock.now())  # its next step is due
    holds, lease.lost = lease.holds, True  # expired and taken while the tick ran
    advanced = loop.txns.advance(fix.plan.txn_id)  # the tick's own call, past its first check
    assert advanced.refused == "shop's writer lease is held by replica-2, not by this process"
    assert lease.holds == holds + 1, "asked before the step"
    assert loop.journal.load(fix.plan.txn_id).records == fix.records, "nothing recorded"
