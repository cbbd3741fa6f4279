"""LiveActions on a real LocalForge repo and the apply-engine world of the transaction tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.commands.actions import ActionRefused
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.live_actions import LiveActions
from gitmedic.bot.transactions.asked import carry_out
from gitmedic.bot.transactions.intents import Intents
from gitmedic.bot.transactions.ports import ports_of
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.forge import PrFilter, PrState
from gitmedic.reconciler.transaction import Journal, Outcome, Phase, Plan, Runner, TxnState
from tests.transaction.e2e_world import APP, CONFIG, git, make_repo, plan, ports


class World:
    """A repo, its forge and journal, serve's commands, and the loop's tick over them."""

    def __init__(self, root: Path) -> None:
        self.repo = make_repo(root)
        self.clock = FakeClock(1_000_000.0)
        self.forge = LocalForge(self.repo)
        self.journal = Journal(root / "journal.sqlite")
        self.retried: list[str] = []
        self.retry_incident: Callable[[str], str | None] = self._retry
        # one engine for the test: it remembers when it first saw each commit
        self.ports = ports(self.repo, self.clock)
        self.process(5.0)

    def process(self, mu_now: float) -> None:
        """serve's state in one process: the journal, the commands, the intents, the runner."""
        self.actions = LiveActions(
            self.forge,
            self.journal,
            lambda: self.ports,
            self.clock,
            app="shop",
            mu_now=lambda: mu_now,
        )
        self.intents = Intents(self.journal, "shop")
        # The loop's one runner; every persisted step yields serve's lock to a waiting
        # command, as serve's event handler does.
        self.runner = Runner(
            self.journal,
            self.clock,
            CONFIG,
            on_record=lambda state: self.actions.lock.yield_to_waiters(),
        )

    def restart(self, mu_now: float = 9.0) -> None:
        """A new process over the same state file (mu changed meanwhile)."""
        self.journal = Journal(self.journal.path)
        self.process(mu_now)

    def _retry(self, incident: str) -> str:
        self.retried.append(incident)
        return "attempt 2 started"

    def tick(self) -> None:
        """The loop's tick over what the commands recorded (as :meth:`Loop.step` does it):
        every unsettled transaction advanced until it waits, then the intents."""
        with self.actions.lock:
            for state in self.journal.transactions(app="shop"):
                if not state.settled:
                    kind = ports_of(state.plan, self.ports, self.repo)
                    self.runner.until_wait(state.plan.txn_id, kind)
            carry_out(self.intents, self.forge, self.retry_incident, lambda: self.ports)

    def start(self, txn: Plan) -> TxnState:
        """Create the transaction and tick as the monitor would, until it waits."""
        self.journal.create(txn, self.clock.now())
        self.tick()
        return self.journal.load(txn.txn_id)

    def settle(self, txn_id: str, rounds: int = 100) -> TxnState:
        for _ in range(rounds):
            self.tick()
            state = self.journal.load(txn_id)
            if state.phase.terminal or state.phase is Phase.AWAITING_APPROVAL:
                return state
            self.clock.sleep(10)
        return self.journal.load(txn_id)

    def human_merge(self, branch: str, file: str, old: str, new: str) -> tuple[int, str]:
        git(self.repo, "checkout", "-qb", branch)
        path = self.repo / APP / file
        path.write_text(path.read_text().replace(old, new, 1))
        git(self.repo, "commit", "-qam", f"{file}: {new}")
        git(self.repo, "checkout", "-q", "main")
        pr = self.forge.open_pr_as("bob", branch, "main", f"Change {file}", "")
        return pr.number, self.forge.merge(pr.number, pr.head_sha)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def waiting(world: World) -> TxnState:
    state = world.start(replace(plan(world.repo, "good"), auto_merge=False))
    assert state.phase is Phase.AWAITING_APPROVAL
    return state


def port(world: World) -> str:
    text = git(world.repo, "show", f"main:{APP}/catalog.yaml")
    return next(line.split(":")[1].strip() for line in text.splitlines() if "targetPort" in line)


def test_approve_labels_and_the_approval_poll_merges(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    assert "Approved" in world.actions.approve(state.pr)
    final = world.settle(state.plan.txn_id)
    assert final.outcome is Outcome.COMMITTED, final.reason
    assert port(world) == "3550"


def test_hold_keeps_an_approved_pr_unmerged_until_unhold(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    world.actions.approve(state.pr)
    world.actions.hold(state.pr)
    assert world.settle(state.plan.txn_id, rounds=5).phase is Phase.AWAITING_APPROVAL
    with pytest.raises(ActionRefused, match="is held"):
        world.actions.merge(state.pr)
    world.actions.unhold(state.pr)
    assert world.settle(state.plan.txn_id).outcome is Outcome.COMMITTED


def test_merge_is_answered_at_once_and_the_next_tick_merges_through_the_transaction(
    world: World,
) -> None:
    state = waiting(world)
    assert state.pr is not None
    reply = world.actions.merge(state.pr)
    assert f"Approved #{state.pr}: gitmedic merges it at its next tick" in reply
    assert world.forge.get_pr(state.pr).state is PrState.OPEN, "the command merged nothing"
    world.tick()
    merged = world.journal.load(state.plan.txn_id)
    assert merged.merge_sha and world.forge.get_pr(state.pr).state is PrState.MERGED
    told = [c.body for c in world.forge.list_comments(state.pr) if c.topic == "merge"]
    assert len(told) == 1 and told[0].endswith(
        f"Merged #{state.pr} as `{merged.merge_sha[:12]}`; gitmedic now waits for the sync "
        "and verifies it."
    )
    assert world.settle(state.plan.txn_id).outcome is Outcome.COMMITTED


def test_retry_closes_the_pr_and_queues_the_incident_once(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    assert "try incident inc-1 again" in world.actions.retry(state.pr)
    world.actions.retry(state.pr)  # idempotent
    assert world.forge.get_pr(state.pr).state is PrState.CLOSED
    assert world.retried == [], "queued: the next tick runs it"
    world.tick()
    assert world.retried == ["inc-1"]
    assert world.journal.load(state.plan.txn_id).outcome is Outcome.REJECTED


def replicas(world: World) -> str:
    return git(world.repo, "show", f"main:{APP}/cart.yaml").split("replicas:")[1].split()[0]


def test_revert_of_a_persons_merged_pr_runs_as_a_transaction(world: World) -> None:
    pr, _ = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    assert replicas(world) == "2"
    reply = world.actions.revert(pr)
    assert reply == world.actions.revert(pr), "the same revert, once"
    assert f"opens the PR that reverts #{pr} at its next tick" in reply
    assert world.forge.find_prs({"reverts": pr}) == (), "the command opened nothing"
    final = world.settle(f"revert/pr-{pr}")
    assert final.outcome is Outcome.COMMITTED, final.reason
    told = [c.body for c in world.forge.list_comments(pr) if c.topic == "revert"]
    assert len(told) == 1 and f"Opened #{final.pr} to revert #{pr}." in told[0]
    assert world.actions.revert(pr).startswith(f"Opened #{final.pr} to revert #{pr}")
    assert replicas(world) == "1", "main is back to before the person's change"
    prs = world.forge.list_prs(PrFilter.ALL)
    assert [p.state for p in prs] == [PrState.MERGED, PrState.MERGED]


def test_a_revert_that_brings_a_fault_back_is_stopped_by_the_gate(world: World) -> None:
    pr, _ = world.human_merge("bob/port", "catalog.yaml", "targetPort: 3551", "targetPort: 3550")
    world.actions.revert(pr)
    final = world.settle(f"revert/pr-{pr}")
    assert final.outcome is Outcome.REJECTED
    assert final.reason.startswith("gate failed: new finding service-target-port")
    assert port(world) == "3550", "the fix stays on main"


def test_revert_refuses_an_open_pr(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    with pytest.raises(ActionRefused, match="is open, not merged: nothing to revert"):
        world.actions.revert(state.pr)


def test_explain_tells_the_transaction_from_the_journal(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    text = world.actions.explain(state.pr)
    assert 'incident: "inc-1"' in text
    assert "Transaction `inc-1/good` (attempt 1, playbook): awaiting-approval" in text
    assert "Reason: waiting for approval" in text


def watch_ticks(world: World, merge_sha: str, rounds: int = 60) -> TxnState:
    """Ticks until the watch of ``merge_sha`` settles or waits for a person."""
    txn_id = f"watch/{merge_sha}"
    for _ in range(rounds):
        world.tick()
        state = world.journal.load(txn_id)
        if state.settled or state.phase is Phase.AWAITING_APPROVAL:
            return state
        world.clock.sleep(10)
    return world.journal.load(txn_id)


def broken_image(world: World) -> tuple[int, str]:
    image = "image: ghcr.io/gitmedic/shop-catalog:"
    text = (world.repo / APP / "catalog.yaml").read_text()
    tag = text.split(image, 1)[1].split()[0]
    return world.human_merge("bob/img", "catalog.yaml", image + tag, image + "9.9.9-broken")


def test_a_regressing_human_merge_gets_a_revert_pr_offered_with_evidence(world: World) -> None:
    pr, sha = broken_image(world)
    world.actions.watch_merge(pr, sha)
    world.actions.watch_merge(pr, sha)  # a redelivery: one watch
    assert len(world.actions.watches) == 1
    state = watch_ticks(world, sha)
    revert = world.forge.find_prs({"reverts": pr})
    assert len(revert) == 1 and revert[0].state is PrState.OPEN, "offered, not merged"
    assert state.phase is Phase.AWAITING_APPROVAL and state.revert_pr == revert[0].number
    (comment,) = world.forge.list_comments(revert[0].number)
    assert "made the app worse" in comment.body
    assert "pod-crashloop on Deployment/shop/catalog: container server is crash-looping" in (
        comment.body
    )
    for _ in range(3):  # later ticks: still offered, never merged without a person
        world.clock.sleep(CONFIG.approval_poll_s)
        world.tick()
    assert world.forge.get_pr(revert[0].number).state is PrState.OPEN


def test_a_harmless_human_merge_is_left_alone(world: World) -> None:
    pr, sha = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    world.actions.watch_merge(pr, sha)
    state = watch_ticks(world, sha)
    assert state.settled and state.outcome is Outcome.COMMITTED, state.reason
    assert world.forge.find_prs({"reverts": pr}) == ()
    assert world.forge.list_comments(pr) == (), "a person's change kept: nothing said"
    assert world.actions.watches == []
