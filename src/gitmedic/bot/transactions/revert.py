"""Reverting any merged PR as a transaction: the same machine, ports that open a revert PR.

A person's ``/gitmedic revert`` on a merged PR (the bot's or anyone's) records
the revert's plan in the journal (:func:`ask_revert`: its checkpoint is when it
was asked) and is answered at once; the loop's next tick opens its PR and tells
the person on their PR which PR reverts it (:meth:`RevertPorts.open_pr`), and the
ticks after carry it like any change: a PR (``forge.revert_pr``, idempotent: found again by its
branch), a gate on the default branch's head, a merge, the sync, and the
verification that the app is no worse than when the revert was asked for. Only
three ports differ from :class:`ForgePorts`: the PR is the forge's revert PR
rather than edits on a branch (its body then replaced by the plan's, which says
who asked and why: :mod:`gitmedic.bot.render.revert_asked`), the gate judges
that PR's head as it is (a revert is not rebased), and re-gating keeps the head.
Undo is always allowed, so the plan auto-merges.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from gitmedic.bot.transactions.kinds import REVERT
from gitmedic.reconciler.forge import StatusState, Validation
from gitmedic.reconciler.transaction import GateResult, OpenedPR, Plan, TxnState
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT, ForgePorts
from gitmedic.reconciler.transaction.journal import Journal

PREFIX = "revert/pr-"


def ask_revert(journal: Journal, ports: ForgePorts, plan: Plan, now: float) -> TxnState:
    """Record the revert a person asked for, checkpointed now (main's head, mu, the
    oracles' baselines); idempotent: asked twice, the one plan. Its PR is the next
    tick's to open."""
    plan = replace(plan, base_sha=ports.main_head(), baselines=ports.verifier.baselines())
    return journal.create(plan, now)


def opened_text(revert: int, pr: int) -> str:
    """What the person is told on the PR they asked to revert, once its revert PR exists."""
    return (
        f"Opened #{revert} to revert #{pr}. gitmedic carries it like any change: "
        "gate, merge, wait for the sync, verify."
    )


def revert_plan(
    app: str, pr: int, base_sha: str, mu_pre: float, title: str, body: str = ""
) -> Plan:
    return Plan(
        txn_id=f"{PREFIX}{pr}",
        app=app,
        incident=f"revert-{pr}",
        attempt=1,
        strategy=REVERT,
        branch="",  # the forge names the revert branch
        title=f"Revert #{pr}: {title}",
        edits=(),
        base_sha=base_sha,
        mu_pre=mu_pre,
        targets=(),
        auto_merge=True,
        body=body or f"Reverts #{pr} as asked on the PR.",
    )


def reverted_pr(plan: Plan) -> int | None:
    """The PR a revert plan undoes, or None for any other plan."""
    if plan.strategy != REVERT or not plan.txn_id.startswith(PREFIX):
        return None
    return int(plan.txn_id.removeprefix(PREFIX))


class RevertPorts(ForgePorts):
    """ForgePorts whose PR is the revert PR of ``target`` (see the module docstring)."""

    @classmethod
    def of(cls, ports: ForgePorts) -> RevertPorts:
        return cls(*ports.parts(), **ports.options())

    def open_pr(self, plan: Plan) -> OpenedPR:
        target = reverted_pr(plan)
        if target is None:
            raise ValueError(f"{plan.txn_id} is not a revert plan")
        pr = self.forge.revert_pr(target)
        # The forge's state marker ("reverts", "merge_sha") is kept: it finds the PR again.
        # A body the forge refuses leaves its own: the undo never waits on its description.
        kept = dict(pr.bot_state or {"reverts": target})
        with contextlib.suppress(Validation):
            pr = self.forge.ensure_pr(pr.branch, pr.base, pr.title, plan.body, state=kept)
        # Told before the step's record: a kill between repeats the comment, once (its key).
        self.forge.ensure_comment(target, "revert", opened_text(pr.number, target))
        return OpenedPR(pr.number, pr.head_sha)

    def gate(self, plan: Plan, number: int) -> GateResult:
        base = self.main_head()
        head = self.forge.get_pr(number).head_sha
        report = self.gate_check.check(base, head, ())
        state = StatusState.SUCCESS if report.ok else StatusState.FAILURE
        self.forge.set_status(head, GATE_CONTEXT, state, report.summary[:140])
        return GateResult(report.ok, report.summary, head, base)

    def refresh_branch(self, plan: Plan, number: int) -> OpenedPR:
        return OpenedPR(number, self.forge.get_pr(number).head_sha)
