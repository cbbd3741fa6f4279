"""The watch of a person's merge: a transaction of the same machine, started at ``merged``.

When a person merges a change to the app, the webhook records a plan whose first
record is ``merged`` (the person's merge SHA, mu and the oracles' baselines when
it was reported: the checkpoint), in one write (:func:`start_watch`). From there
the loop's ticks step it as any transaction: the sync wait, then the journaled
verification window, one measurement per step, never a sleep; a restarted
process resumes it from the journal, its measurements counted. The one verdict
(:func:`~gitmedic.reconciler.transaction.verdict.judge`) decides:

- kept (no worse than before): nothing is merged and nothing is said: the
  person's change stands;
- worse (or its sync failed, or never came): the machine undoes it, and the undo
  is a revert PR *offered*, never merged without a person: the plan's
  ``revert_auto_merge`` is off (``policy.revert_regressions: approval``
  semantics), so the transaction waits for a person's approval of the revert,
  with the evidence on both PRs (:meth:`WatchPorts.open_revert`).

Like any transaction in flight, a watch in its sync wait or window holds the loop's
new incidents (its own oracles watch the app meanwhile): what the person's change
broke is answered by its revert, not by a fix on top of it.

Only the PR-making ports differ from :class:`ForgePorts`: there is no PR of
the bot's to open (the person's merged PR is the transaction's), the revert PR
is the forge's revert of the person's PR with a body that says what was measured
(:func:`~gitmedic.bot.render.revert_asked.watched_revert_body`), and a change
kept is announced to nobody but the dashboard.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_asked import watched_revert_body
from gitmedic.bot.transactions.intents import Intents, Item
from gitmedic.bot.transactions.kinds import WATCH
from gitmedic.detectors.finding import Severity
from gitmedic.reconciler.forge import Forge, Validation
from gitmedic.reconciler.transaction import OpenedPR, Phase, Plan, Record, TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.journal import Journal
from gitmedic.reconciler.transaction.signals import firing_key

PREFIX = "watch/"
QUEUED = "watch"  # the intent a serve of before queued for a watch, before it was a plan


def watch_plan(
    app: str, pr: int, merge_sha: str, title: str, mu_pre: float, ports: ForgePorts
) -> Plan:
    """The watch of ``pr`` merged as ``merge_sha``: its checkpoint is now (mu before the
    merge deployed, the oracles' baselines, what fires), its base the merge itself, so
    its window judges exactly that commit."""
    firing = tuple(sorted({firing_key(f) for f in ports.verifier.live_findings()}))
    return Plan(
        txn_id=f"{PREFIX}{merge_sha}",
        app=app,
        incident=f"watch-{pr}",
        attempt=0,
        strategy=WATCH,
        branch="",
        title=f"Watch #{pr}: {title}",
        edits=(),
        base_sha=merge_sha,
        mu_pre=mu_pre,
        targets=(),
        auto_merge=False,  # nothing of the bot's to merge: the person merged it
        body="",
        baselines=ports.verifier.baselines(),
        firing=firing,
        revert_auto_merge=False,  # a regression's revert is offered, never merged alone
    )


def start_watch(journal: Journal, plan: Plan, pr: int, now: float) -> TxnState:
    """Record the watch, already at ``merged`` (idempotent: a redelivery finds it)."""
    sha = plan.base_sha
    merged = {"pr": pr, "head_sha": sha, "merge_sha": sha, "merged_at": now}
    return journal.create(plan, now, first=Record(1, Phase.MERGED, now, merged))


def adopt_queued(
    intents: Intents,
    asked: list[Item],  # the tick's one read of the open intents: its queued watches
    journal: Journal,
    forge: Forge,
    app: str,
    ports: Callable[[], ForgePorts],
) -> None:
    """Watches a serve of before queued as intents (mu when asked, and when): each started
    as its transaction, mu and the time of the ask kept, then the intent marked done."""
    for item in asked:
        pr, since = int(item.data["pr"]), float(item.data["since"])
        title = forge.get_pr(pr).title
        plan = watch_plan(app, pr, item.key, title, float(item.data["mu_pre"]), ports())
        start_watch(journal, plan, pr, since)
        intents.finish(QUEUED, item.key, "started as its transaction")


def watched_pr(plan: Plan) -> int | None:
    """The person's PR a watch plan judges, or None for any other plan."""
    if plan.strategy != WATCH or not plan.incident.startswith("watch-"):
        return None
    return int(plan.incident.removeprefix("watch-"))


class WatchPorts(ForgePorts):
    """ForgePorts for a watch plan (see the module docstring)."""

    @classmethod
    def of(cls, ports: ForgePorts) -> WatchPorts:
        return cls(*ports.parts(), **ports.options())

    def open_pr(self, plan: Plan) -> OpenedPR:
        raise ValueError(f"{plan.txn_id} starts merged: a watch opens no PR of its own")

    def open_revert(self, state: TxnState) -> OpenedPR:
        """The person's PR's revert, offered with what was measured, told on both PRs."""
        assert state.pr is not None
        pr, sha = state.pr, state.merge_sha
        revert = self.forge.revert_pr(pr)
        mu_post = state.mu_post if state.mu_post is not None else state.plan.mu_pre
        evidence = (*state.feedback, *self._critical())
        title = self.forge.get_pr(pr).title
        why = _why(state)
        body = watched_revert_body(
            pr, sha, title, state.plan.app, (state.plan.mu_pre, mu_post), why, evidence
        )
        kept = dict(revert.bot_state or {"reverts": pr, "merge_sha": sha})
        with contextlib.suppress(Validation):  # refused: the forge's body, and the comments
            revert = self.forge.ensure_pr(
                revert.branch, revert.base, revert.title, body, state=kept
            )
        lines = "\n".join(f"- {line}" for line in evidence) or "- (no detail)"
        text = (
            f"#{pr} (`{sha[:12]}`) made the app worse after it deployed "
            f"({why}; mu was {state.plan.mu_pre:g} before).\n\nEvidence:\n{lines}\n\n"
            f"#{revert.number} reverts it; merge it or comment `/gitmedic merge` there.\n\n"
            f"{MU_EXPLAINED}"
        )
        self.forge.ensure_comment(revert.number, "watch-evidence", text)
        self.forge.ensure_comment(pr, "watch", text)
        return OpenedPR(revert.number, revert.head_sha)

    def _critical(self) -> tuple[str, ...]:
        """The critical findings firing now, one line each: the revert's evidence."""
        return tuple(
            f"{f.detector} on {f.resource}: {f.summary}"
            for f in self.verifier.live_findings()
            if f.severity is Severity.CRITICAL
        )

    def announce(self, state: TxnState, message: str) -> None:
        """A person's change kept is theirs: nothing said on it, the dashboard updated.
        Any other outcome (its offered revert carried, or held) is told on their PR."""
        if state.phase is Phase.COMMITTED:
            self.announced(state)
            return
        super().announce(state, message)


def _why(state: TxnState) -> str:
    """The judge's reason, and what the oracles told when the window judged (a watch
    undone in its sync wait has no window summary: its reason says why)."""
    summary = state.verdict_summary
    if not summary or summary in state.reason:
        return state.reason
    return f"{state.reason} ({summary})"
