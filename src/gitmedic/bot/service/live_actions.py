"""``LiveActions``: the production BotActions, over the journal, the forge and the loop.

Comment commands answer at once and leave the waiting to the monitor:

- ``approve`` / ``hold`` / ``unhold`` are the labels ``gitmedic:approved`` and
  ``gitmedic:hold`` that :meth:`ForgePorts.approved` reads; the transaction's
  approval poll (in :meth:`work`) then merges. A hold that comes once the PR
  merged (in the sync wait or the verification window) cannot stop anything:
  no label is set, and the reply says what happens instead (the verification
  goes on, a regression is still reverted, ``/gitmedic revert`` undoes now);
- ``merge`` approves and, when the PR's gate is green, steps its transaction
  now, so the merge happens through the machine (head SHA the gate saw, main
  not moved) and the sync wait and verification follow;
- ``revert`` plans a revert transaction (:mod:`gitmedic.bot.revert_txn`), opens
  its PR now and lets :meth:`work` carry it: merge, sync, verify;
- ``retry`` closes the attempt's PR and queues a new attempt for its incident;
- ``watch_merge`` queues a watch of a person's merge: once deployed, the oracles
  judge it against mu when the merge was reported, and a regression gets a revert
  PR offered (not merged) with the evidence as a comment;
- ``main_moved`` does nothing more: every transaction re-gates when main moved.

Queued retries and watches are promises to a person, so they are kept in the
journal's database (:class:`~gitmedic.bot.pending.PendingWork`), not in memory:
a restarted ``serve`` carries them out, and an item is marked done only after it
ran (a retry) or was judged (a watch). Queuing is idempotent (one watch per merge
SHA, one queued retry per incident). A retry re-run after a crash is recognised
by the journal: the incident already has more attempts than when it was queued.
The retry callable (the loop's :meth:`~gitmedic.bot.controller.loop.Loop.retry_queued`)
may answer ``None``: the item stays queued (after a restart the loop has not looked
yet, or a transaction of the app is in flight); its result is otherwise told on the
PR the person commented on.

:meth:`work` is the monitor's share of each tick, called right after the loop's
step under the same lock as the commands: it runs queued retries and watches and
steps every transaction of the app in flight until it must wait. It never sleeps,
and it yields the shared lock between steps (:mod:`gitmedic.bot.service.lock`) so a
command never waits for more than one step.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from gitmedic.bot.commands.actions import ActionRefused, DetectorRun, bot_pr, open_bot_pr
from gitmedic.bot.pending import Item, PendingWork
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_asked import Asked, requested_revert_body, watched_revert_body
from gitmedic.bot.revert_txn import RevertPorts, revert_plan, reverted_pr
from gitmedic.bot.service.lock import SharedLock
from gitmedic.detectors.finding import Severity
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.forge import Forge, PrState, StatusState, Validation
from gitmedic.reconciler.transaction import Journal, MachineConfig, Phase, Plan, Runner, TxnState
from gitmedic.reconciler.transaction.forge_ports import (
    APPROVED_LABEL,
    GATE_CONTEXT,
    HOLD_LABEL,
    ForgePorts,
)
from gitmedic.reconciler.transaction.ports import SyncPhase, Verdict
from gitmedic.reconciler.transaction.verdict import Decision, judge

log = logging.getLogger(__name__)
RETRY, WATCH = "retry", "watch"


@dataclass(frozen=True)
class Watch:
    pr: int
    merge_sha: str
    mu_pre: float
    since: float

    @classmethod
    def of(cls, item: Item) -> Watch:
        data = item.data
        return cls(int(data["pr"]), item.key, float(data["mu_pre"]), float(data["since"]))


class LiveActions:
    def __init__(
        self,
        forge: Forge,
        journal: Journal,
        ports: Callable[[], ForgePorts],
        clock: Clock,
        *,
        app: str,
        mu_now: Callable[[], float],
        retry: Callable[[str], str | None],  # None: not decidable yet, stays queued
        machine: MachineConfig | None = None,
        lock: SharedLock | None = None,
        resume_ports: Callable[[Plan], ForgePorts] | None = None,
    ) -> None:
        self.forge, self.journal, self.ports, self.clock = forge, journal, ports, clock
        # The ports of a transaction already planned: its recorded checkpoint, not a new one.
        self.resume_ports = resume_ports or (lambda plan: ports())
        self.app, self.mu_now, self.retry_incident = app, mu_now, retry
        self.machine = machine or MachineConfig()
        self.runner = Runner(journal, clock, self.machine)  # the one runner, as the loop's
        self.lock = lock or SharedLock()
        self.pending = PendingWork(journal.path)  # same database: one state to back up

    @property
    def retries(self) -> list[str]:
        """Incidents queued for a new attempt, oldest first."""
        return [item.key for item in self.pending.items(RETRY)]

    @property
    def watches(self) -> list[Watch]:
        """Persons' merges still to judge, oldest first."""
        return [Watch.of(item) for item in self.pending.items(WATCH)]

    # -- comment commands ------------------------------------------------------------

    def approve(self, pr: int) -> str:
        with self.lock:
            open_bot_pr(self.forge, pr, "approve")
            self.forge.add_labels(pr, [APPROVED_LABEL])
        return f"Approved: gitmedic merges #{pr} once its gate passes."

    def merge(self, pr: int) -> str:
        with self.lock:
            found = open_bot_pr(self.forge, pr, "merge")
            if HOLD_LABEL in found.labels:
                raise ActionRefused(f"#{pr} is held; `/gitmedic unhold` it first.")
            self.forge.add_labels(pr, [APPROVED_LABEL])
            gate = {s.context: s.state for s in self.forge.get_statuses(found.head_sha)}
            if gate.get(GATE_CONTEXT) is not StatusState.SUCCESS:
                return f"Approved #{pr}: it merges once its {GATE_CONTEXT} check passes."
            state = self._txn_of(pr)
            if state is None:
                sha = self.forge.merge(pr, found.head_sha)
                return f"Merged #{pr} as `{sha[:12]}`."
            state = self._step_until_wait(state.plan.txn_id, self._ports_for(state))
        if state.merge_sha:
            return (f"Merged #{pr} as `{state.merge_sha[:12]}`; gitmedic now waits for the "
                    "sync and verifies it.")  # fmt: skip
        return f"Approved #{pr}; it is {state.phase.value}: {state.reason or 'in progress'}."

    def hold(self, pr: int) -> str:
        with self.lock:
            found = bot_pr(self.forge, pr, "hold")
            if found.state is PrState.MERGED:  # too late to stop: say what still happens
                return _hold_after_merge(pr, found.merge_sha or "", self._txn_of(pr))
            self.forge.add_labels(pr, [HOLD_LABEL])
        return f"Holding #{pr}: it will not be merged (`/gitmedic unhold` undoes)."

    def unhold(self, pr: int) -> str:
        with self.lock:
            bot_pr(self.forge, pr, "unhold")
            self.forge.remove_labels(pr, [HOLD_LABEL])
        return f"#{pr} is no longer held."

    def retry(self, pr: int) -> str:
        with self.lock:
            found = bot_pr(self.forge, pr, "retry")
            if found.state is PrState.MERGED:
                raise ActionRefused(f"#{pr} is merged; to undo it use `/gitmedic revert`.")
            incident = str((found.bot_state or {}).get("incident", ""))
            if not incident:
                raise ActionRefused(f"#{pr} names no incident, so there is nothing to retry.")
            if found.state is PrState.OPEN:
                self.forge.close_pr(pr)
            attempts = len(self.journal.transactions(incident=incident))
            self.pending.add(RETRY, incident, {"pr": pr, "attempts": attempts}, self.clock.now())
        return f"Closed #{pr}; gitmedic will try incident {incident} again with a new attempt."

    def revert(self, pr: int, asked: Asked | None = None) -> str:
        with self.lock:
            found = self.forge.get_pr(pr)
            if found.state is not PrState.MERGED:
                raise ActionRefused(f"#{pr} is {found.state.value}, not merged: nothing to revert.")
            ports = self.ports()
            mu = self.mu_now()
            asked = asked or Asked("", f"on #{pr}")
            body = requested_revert_body(pr, found.title, self.app, mu, asked)
            plan = revert_plan(self.app, pr, ports.main_head(), mu, found.title, body)
            plan = replace(plan, baselines=ports.verifier.baselines())
            state = self.journal.create(plan, self.clock.now())
            if state.phase is Phase.PLANNED:
                state = self.runner.step(plan.txn_id, RevertPorts.of(ports)).state
        return (
            f"Opened #{state.pr} to revert #{pr}. gitmedic carries it like any change: "
            "gate, merge, wait for the sync, verify."
        )

    def explain(self, pr: int) -> str:
        with self.lock:
            return self._explain(pr)

    def _explain(self, pr: int) -> str:
        found = self.forge.get_pr(pr)
        state = found.bot_state
        if state is None:
            return f"#{pr} was not opened by gitmedic, so there is nothing of mine to explain."
        facts = ", ".join(f"{k}: {json.dumps(state[k])}" for k in sorted(state))
        labels = ", ".join(found.labels) or "none"
        lines = [f"#{pr} is {found.state.value}. Its state: {facts}. Labels: {labels}."]
        txn = self._txn_of(pr)
        if txn is not None:
            lines.append(_txn_text(txn))
        return "\n\n".join(lines)

    # -- events ----------------------------------------------------------------------

    def watch_merge(self, pr: int, merge_sha: str) -> None:
        with self.lock:
            if any(w.merge_sha == merge_sha for w in self.watches):
                return  # a redelivery: mu now would not be mu before the merge
            now = self.clock.now()
            data = {"pr": pr, "mu_pre": self.mu_now(), "since": now}
            self.pending.add(WATCH, merge_sha, data, now)

    def main_moved(self, sha: str) -> None:
        log.info("main moved to %s; transactions in flight re-gate before merging", sha[:12])

    def detector_run(self, run: DetectorRun) -> None:
        log.info("detector run %s %s on %s: %s", run.source, run.name, run.head_sha[:12],
                 run.conclusion)  # fmt: skip

    # -- the monitor's share ---------------------------------------------------------

    def work(self) -> None:
        """Queued retries and watches, then every transaction in flight, until each waits."""
        with self.lock:
            for item in self.pending.items(RETRY):
                result = self._retry(item)
                if result is not None:
                    self._retried(item, result)
            for watch in self.watches:
                if self._watch(watch):
                    self.pending.finish(WATCH, watch.merge_sha)
            for state in self.journal.transactions(app=self.app):
                if not state.settled:
                    self._step_until_wait(state.plan.txn_id, self._ports_for(state), yields=True)

    def _retry(self, item: Item) -> str | None:
        incident = item.key
        if len(self.journal.transactions(incident=incident)) > int(item.data["attempts"]):
            # Run before a crash that came before its done mark: the journal has its attempt.
            result: str | None = "already retried"
        else:
            result = self.retry_incident(incident)
        log.info("retry of %s: %s", incident, result or "kept queued until the loop can tell")
        return result

    def _retried(self, item: Item, result: str) -> None:
        """Tell the person on the PR they commented on, then mark the item done."""
        pr = int(item.data.get("pr", 0))
        if pr:
            self.forge.ensure_comment(pr, "retry", f"Retry of incident {item.key}: {result}.")
        self.pending.finish(RETRY, item.key, result)

    def _step_until_wait(self, txn_id: str, ports: ForgePorts, *, yields: bool = False) -> TxnState:
        """Step until the transaction waits; ``yields``: the monitor lets commands in between."""
        between = self.lock.yield_to_waiters if yields else (lambda: None)
        return self.runner.until_wait(txn_id, ports, between=between).state

    def _watch(self, watch: Watch) -> bool:
        """One look at a watched merge; True when it is judged (or given up)."""
        ports = self.ports()
        sync = ports.sync_status(watch.merge_sha)
        if sync.phase is SyncPhase.PROGRESSING:
            if self.clock.now() - watch.since < self.machine.sync_timeout_s:
                return False
            why = f"`{watch.merge_sha[:12]}` was not deployed in time"
            self.forge.ensure_comment(
                watch.pr, "watch", f"gitmedic could not verify #{watch.pr}: {why}."
            )
            return True
        plan = revert_plan(self.app, watch.pr, watch.merge_sha, watch.mu_pre, "")
        verdict = ports.verify(plan, watch.merge_sha)
        judged = judge(watch.mu_pre, verdict)  # the one verdict, as for the bot's own changes
        regressed = sync.phase is SyncPhase.FAILED or judged.decision is Decision.UNDO
        if regressed:
            firing = [f"{f.detector} on {f.resource}: {f.summary}"
                      for f in ports.verifier.live_findings()
                      if f.severity is Severity.CRITICAL]  # fmt: skip
            why = judged.reason if judged.decision is Decision.UNDO else "its sync failed"
            evidence = (*verdict.findings, *firing)
            self._offer_revert(watch, verdict, f"{why} ({verdict.summary})", evidence)
        return True

    def _offer_revert(
        self, watch: Watch, verdict: Verdict, why: str, evidence: tuple[str, ...]
    ) -> None:
        revert = self.forge.revert_pr(watch.pr)
        body = watched_revert_body(
            watch.pr,
            watch.merge_sha,
            self.forge.get_pr(watch.pr).title,
            self.app,
            (watch.mu_pre, verdict.mu),
            why,
            evidence,
        )
        kept = dict(revert.bot_state or {"reverts": watch.pr, "merge_sha": watch.merge_sha})
        with contextlib.suppress(Validation):  # refused: the forge's body, and the comments
            revert = self.forge.ensure_pr(
                revert.branch, revert.base, revert.title, body, state=kept
            )
        summary = verdict.summary
        lines = "\n".join(f"- {line}" for line in evidence) or "- (no detail)"
        text = (
            f"#{watch.pr} (`{watch.merge_sha[:12]}`) made the app worse after it deployed "
            f"({summary}; mu was {watch.mu_pre:g} before).\n\nEvidence:\n{lines}\n\n"
            f"#{revert.number} reverts it; merge it or comment `/gitmedic merge` there.\n\n"
            f"{MU_EXPLAINED}"
        )
        self.forge.ensure_comment(revert.number, "watch-evidence", text)
        self.forge.ensure_comment(watch.pr, "watch", text)

    # -- helpers ---------------------------------------------------------------------

    def _ports_for(self, state: TxnState) -> ForgePorts:
        ports = self.resume_ports(state.plan)
        return RevertPorts.of(ports) if reverted_pr(state.plan) is not None else ports

    def _txn_of(self, pr: int) -> TxnState | None:
        found = [t for t in self.journal.transactions(app=self.app) if t.pr == pr]
        return found[-1] if found else None


_UNDO_NOW = "To undo it now, comment `/gitmedic revert`."
_STILL = f"if the app gets worse it is still reverted automatically. {_UNDO_NOW}"
_REVERTING = (Phase.UNDOING, Phase.REVERT_OPENED, Phase.REVERTED, Phase.REVERT_SYNCED)


def _hold_after_merge(pr: int, merge_sha: str, state: TxnState | None) -> str:
    """The answer to a hold that comes after the merge: nothing is held; what happens instead."""
    merged = f"#{pr} is already merged (`{merge_sha[:12]}`), so a hold cannot stop it"
    if state is None:  # a bot PR no transaction carries (a memory PR): nothing follows it
        return f"{merged}, and nothing is held. {_UNDO_NOW}"
    if state.phase is Phase.MERGED:
        return f"{merged}. gitmedic waits for the engine to deploy it, then verifies it; {_STILL}"
    if state.phase is Phase.SYNCED:
        return f"{merged}: it is deployed and in its verification window, which continues; {_STILL}"
    if state.phase in _REVERTING:
        revert = f" (#{state.revert_pr})" if state.revert_pr else ""
        return f"{merged}; it made the app worse and gitmedic is already reverting it{revert}."
    if state.phase is Phase.RESTORED:
        return f"{merged}; it was already reverted: main is back where it was before it."
    if state.phase is Phase.COMMITTED:
        return f"{merged}; it was verified and kept, so nothing is left to hold. {_UNDO_NOW}"
    return f"{merged} ({state.phase.value}: {state.reason or 'no reason recorded'}). {_UNDO_NOW}"


def _txn_text(state: TxnState) -> str:
    mu_after = "not measured" if state.mu_post is None else f"{state.mu_post:g}"
    lines = [
        f"Transaction `{state.plan.txn_id}` (attempt {state.plan.attempt}, "
        f"{state.plan.strategy}): {state.phase.value}, outcome {state.outcome.value}.",
        f"mu before {state.plan.mu_pre:g}, after {mu_after}.",
    ]
    if state.reason:
        lines.append(f"Reason: {state.reason}")
    lines += [f"- {line}" for line in state.feedback]
    return "\n".join(lines) + f"\n\n{MU_EXPLAINED}"
