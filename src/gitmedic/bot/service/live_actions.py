"""``LiveActions``: the production BotActions, over the journal, the forge and the loop.

Comment commands and webhooks never act and never wait: each answers at once,
recording what was asked as an intent in the journal's database, and the loop's
next tick (:meth:`gitmedic.bot.controller.loop.Loop.step`, holding the app's writer
lease, with the process's one runner) acts on it. The reply says what will happen
at that tick; what did happen is told on the PR by the tick.

- ``approve`` / ``hold`` / ``unhold`` are the labels ``gitmedic:approved`` and
  ``gitmedic:hold`` that :meth:`ForgePorts.approved` and the machine's approval
  step read. A hold that comes once the PR merged (in the sync wait or the
  verification window) cannot stop anything: no label is set, and the reply says
  what happens instead (the verification goes on, a regression is still
  reverted, ``/gitmedic revert`` undoes now);
- ``merge`` approves and, when the PR's gate is green, records a merge intent
  (:mod:`gitmedic.bot.transactions.fix`): the next tick's step merges it through
  the machine (head SHA the gate saw, main not moved) and tells the person;
- ``revert`` records the revert's plan (:mod:`gitmedic.bot.transactions.revert`):
  the next tick opens its PR and tells the person which PR reverts theirs; the
  ticks after carry it: gate, merge, sync, verify;
- ``retry`` closes the attempt's PR and queues its incident
  (:mod:`gitmedic.bot.transactions.retry`) for a new attempt at the next tick;
- ``watch_merge`` records the watch of a person's merge, a transaction started at
  ``merged`` (:mod:`gitmedic.bot.transactions.watch`): the ticks step its sync wait
  and journaled window; a regression gets a revert PR offered (not merged) with
  the evidence as a comment;
- ``explain`` reads the journal and the PR now;
- ``main_moved`` does nothing more: every transaction re-gates when main moved.

Commands run under serve's lock (:mod:`gitmedic.bot.service.lock`), as ticks do,
so a command never sees a step half done; a tick holds it for one tick only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from gitmedic.bot.commands.actions import ActionRefused, DetectorRun, bot_pr, open_bot_pr
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_asked import Asked, requested_revert_body
from gitmedic.bot.service.lock import SharedLock
from gitmedic.bot.transactions.fix import ask_merge, txn_of
from gitmedic.bot.transactions.intents import Intents
from gitmedic.bot.transactions.kinds import WATCH
from gitmedic.bot.transactions.retry import queue_retry, queued_retries
from gitmedic.bot.transactions.revert import ask_revert, opened_text, revert_plan
from gitmedic.bot.transactions.watch import start_watch, watch_plan
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.forge import Forge, PrState, StatusState
from gitmedic.reconciler.transaction import Journal, Phase, TxnState
from gitmedic.reconciler.transaction.forge_ports import (
    APPROVED_LABEL,
    GATE_CONTEXT,
    HOLD_LABEL,
    ForgePorts,
)

log = logging.getLogger(__name__)
_NEXT = "at its next tick"


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
        lock: SharedLock | None = None,
    ) -> None:
        self.forge, self.journal, self.ports, self.clock = forge, journal, ports, clock
        self.app, self.mu_now = app, mu_now
        self.lock = lock or SharedLock()
        self.intents = Intents(journal, app)  # the journal's: the app's holder acts on them

    @property
    def retries(self) -> list[str]:
        """Incidents queued for a new attempt, oldest first."""
        return queued_retries(self.intents)

    @property
    def watches(self) -> list[TxnState]:
        """Persons' merges still watched (their transactions not settled), oldest first."""
        return [
            t
            for t in self.journal.transactions(app=self.app)
            if t.plan.strategy == WATCH and not t.settled
        ]

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
            state = txn_of(self.journal, self.app, pr)
            undo = state is not None and state.revert_pr == pr  # a revert is never gated
            gate = {s.context: s.state for s in self.forge.get_statuses(found.head_sha)}
            if not undo and gate.get(GATE_CONTEXT) is not StatusState.SUCCESS:
                return f"Approved #{pr}: it merges once its {GATE_CONTEXT} check passes."
            ask_merge(self.intents, pr, self.clock.now())
        return (
            f"Approved #{pr}: gitmedic merges it {_NEXT}, then waits for the sync and "
            "verifies it; it says here when it merged."
        )

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
            queue_retry(self.intents, self.journal, incident, pr, self.clock.now())
        return (
            f"Closed #{pr}; gitmedic will try incident {incident} again with a new attempt, "
            f"starting {_NEXT}, and says here how it went."
        )

    def revert(self, pr: int, asked: Asked | None = None) -> str:
        with self.lock:
            found = self.forge.get_pr(pr)
            if found.state is not PrState.MERGED:
                raise ActionRefused(f"#{pr} is {found.state.value}, not merged: nothing to revert.")
            mu = self.mu_now()
            asked = asked or Asked("", f"on #{pr}")
            body = requested_revert_body(pr, found.title, self.app, mu, asked)
            plan = revert_plan(self.app, pr, "", mu, found.title, body)
            state = ask_revert(self.journal, self.ports(), plan, self.clock.now())
        if state.pr is not None:  # asked before, and its PR opened since
            return opened_text(state.pr, pr)
        return (
            f"gitmedic opens the PR that reverts #{pr} {_NEXT} and says here which it is; "
            "it carries it like any change: gate, merge, wait for the sync, verify."
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
        """Record the watch of a person's merge; the ticks carry it (a redelivery finds
        the watch recorded: mu now would not be mu before the merge)."""
        with self.lock:
            if any(w.merge_sha == merge_sha for w in self.journal.transactions(app=self.app)):
                return
            title = self.forge.get_pr(pr).title
            plan = watch_plan(self.app, pr, merge_sha, title, self.mu_now(), self.ports())
            start_watch(self.journal, plan, pr, self.clock.now())

    def main_moved(self, sha: str) -> None:
        log.info("main moved to %s; transactions in flight re-gate before merging", sha[:12])

    def detector_run(self, run: DetectorRun) -> None:
        log.info(
            "detector run %s %s on %s: %s", run.source, run.name, run.head_sha[:12], run.conclusion
        )

    # -- helpers ---------------------------------------------------------------------

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
