"""LiveActions on a real LocalForge repo and the apply-engine world of the transaction tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.commands.actions import ActionRefused
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.live_actions import LiveActions
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.forge import PrFilter, PrState
from gitmedic.reconciler.transaction import Journal, Outcome, Phase, Plan, TxnState
from tests.transaction.e2e_world import APP, CONFIG, git, make_repo, plan, ports


class World:
    def __init__(self, root: Path) -> None:
        self.repo = make_repo(root)
        self.clock = FakeClock(1_000_000.0)
        self.forge = LocalForge(self.repo)
        self.journal = Journal(root / "journal.sqlite")
        self.retried: list[str] = []
        # one engine for the test: it remembers when it first saw each commit
        self.ports = ports(self.repo, self.clock)
        self.actions = LiveActions(
            self.forge, self.journal, lambda: self.ports, self.clock,
            app="shop", mu_now=lambda: 5.0, retry=self._retry, machine=CONFIG,
        )  # fmt: skip

    def _retry(self, incident: str) -> str:
        self.retried.append(incident)
        return "attempt 2 started"

    def start(self, txn: Plan) -> TxnState:
        """Create the transaction and step it as the monitor would, until it waits."""
        self.journal.create(txn, self.clock.now())
        self.actions.work()
        return self.journal.load(txn.txn_id)

    def settle(self, txn_id: str, rounds: int = 100) -> TxnState:
        for _ in range(rounds):
            self.actions.work()
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


def test_merge_merges_now_through_the_transaction(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    reply = world.actions.merge(state.pr)
    merged = world.journal.load(state.plan.txn_id)
    assert merged.merge_sha and f"Merged #{state.pr} as `{merged.merge_sha[:12]}`" in reply
    assert world.forge.get_pr(state.pr).state is PrState.MERGED
    assert world.settle(state.plan.txn_id).outcome is Outcome.COMMITTED


def test_retry_closes_the_pr_and_queues_the_incident_once(world: World) -> None:
    state = waiting(world)
    assert state.pr is not None
    assert "try incident inc-1 again" in world.actions.retry(state.pr)
    world.actions.retry(state.pr)  # idempotent
    assert world.forge.get_pr(state.pr).state is PrState.CLOSED
    world.actions.work()
    assert world.retried == ["inc-1"]
    assert world.journal.load(state.plan.txn_id).outcome is Outcome.REJECTED


def replicas(world: World) -> str:
    return git(world.repo, "show", f"main:{APP}/cart.yaml").split("replicas:")[1].split()[0]


def test_revert_of_a_persons_merged_pr_runs_as_a_transaction(world: World) -> None:
    pr, _ = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    assert replicas(world) == "2"
    reply = world.actions.revert(pr)
    assert reply == world.actions.revert(pr), "the same revert PR, once"
    final = world.settle(f"revert/pr-{pr}")
    assert final.outcome is Outcome.COMMITTED, final.reason
    assert f"Opened #{final.pr} to revert #{pr}" in reply
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


def test_a_regressing_human_merge_gets_a_revert_pr_offered_with_evidence(world: World) -> None:
    image = "image: ghcr.io/gitmedic/shop-catalog:"
    text = (world.repo / APP / "catalog.yaml").read_text()
    tag = text.split(image, 1)[1].split()[0]
    pr, sha = world.human_merge("bob/img", "catalog.yaml", image + tag, image + "9.9.9-broken")
    world.actions.watch_merge(pr, sha)
    world.actions.watch_merge(pr, sha)  # a redelivery: one watch
    for _ in range(5):
        world.actions.work()
        world.clock.sleep(10)
    revert = world.forge.find_prs({"reverts": pr})
    assert len(revert) == 1 and revert[0].state is PrState.OPEN, "offered, not merged"
    (comment,) = world.forge.list_comments(revert[0].number)
    assert "made the app worse" in comment.body
    assert "pod-crashloop on Deployment/shop/catalog: container server is crash-looping" in (
        comment.body
    )
    assert world.actions.watches == []


def test_a_harmless_human_merge_is_left_alone(world: World) -> None:
    pr, sha = world.human_merge("bob/cart", "cart.yaml", "replicas: 1", "replicas: 2")
    world.actions.watch_merge(pr, sha)
    for _ in range(5):
        world.actions.work()
        world.clock.sleep(10)
    assert world.forge.find_prs({"reverts": pr}) == ()
    assert world.actions.watches == []
