"""The whole loop for one manifest repo and one app: detect, respond, transact, remember.

The concerns live in their own modules; this one sequences them:

- monitor (:mod:`~gitmedic.bot.controller.monitor`): each interval (on the injected
  clock) the detectors run on the live snapshot; persistent findings open
  incidents, named and kept in the journal (:mod:`~gitmedic.bot.controller.incidents`);
- attempt policy (:mod:`~gitmedic.bot.controller.attempts`): what an incident needs
  next, from its attempts in the journal: resume, propose attempt ``n`` (with the
  feedback of the undone one, extending it when it caused what it uncovered),
  remember, escalate, or stop for a person;
- runner (:mod:`~gitmedic.bot.controller.transact` over
  :class:`~gitmedic.reconciler.transaction.Runner`): plans, ports, advanced until each
  must wait, never slept through;
- memory (:mod:`~gitmedic.bot.transactions.memory`): the memory PR, a transaction too;
- intents (:mod:`~gitmedic.bot.transactions`): what people asked for through
  ``serve`` (a retry, a merge; a revert or a watch of their merge is its plan in the
  journal), acted on by the tick, never by the command that asked.

The loop is a controller that never waits: :meth:`Loop.step` is one tick (the
monitor when its interval is due and no transaction is in flight, whose own oracles
watch the app meanwhile; every unsettled transaction advanced until it must wait,
what follows one that settled, ready incidents answered when no transaction is in
flight: one per app, not counting those waiting for a person; then the intents
people recorded: queued retries run, asked merges told) and returns;
:meth:`Loop.next_due` says when the next tick is due (the next interval, or a
transaction's deadline: a sync poll, the window's next measurement). ``run`` sleeps
until then (:meth:`Loop.tick`); ``serve``'s monitor thread waits for it on the wall,
holding its lock for one tick only, so a comment command is answered right after
the tick it arrived in.

Only the holder of the app's writer lease acts (:mod:`~gitmedic.reconciler.transaction.lease`):
one holder id per process, renewed at every step; the one runner of the process
checks it before each step (a lease lost mid-tick stops the next step). On its first tick the loop
carries on every transaction the journal holds unsettled (a process killed
mid-transaction) before it proposes anything new. Nothing in a tick sleeps and
nothing calls an LLM unless a finding is left that the deterministic strategies
cannot explain: the steady state costs no tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gitmedic.bot.controller.answer import Answerer
from gitmedic.bot.controller.attempts import MEMORY, Attempts, next_move
from gitmedic.bot.controller.checks import Checks
from gitmedic.bot.controller.config import LoopConfig
from gitmedic.bot.controller.healthy_images import HealthyImages
from gitmedic.bot.controller.incidents import IncidentBook
from gitmedic.bot.controller.monitor import Monitor
from gitmedic.bot.controller.report import Event, IncidentReport, describe
from gitmedic.bot.controller.tell import close_resolved
from gitmedic.bot.controller.transact import Transactions
from gitmedic.bot.controller.wiring import Cluster
from gitmedic.bot.responder.incident import Incident, Incidents
from gitmedic.bot.responder.llm import Completion
from gitmedic.bot.transactions.asked import carry_out
from gitmedic.bot.transactions.intents import Intents
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import Journal, LockGrant, Phase, Plan, TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.lease import Lease, WriterLease, this_process

__all__ = ["Loop", "LoopConfig", "learned_ids"]
log = logging.getLogger(__name__)
# A deadline reached on the clock is due: float sums of waits may land a hair short of it.
_EPSILON_S = 1e-6


def learned_ids(detectors: Sequence[Detector]) -> frozenset[str]:
    """The detectors the repo brings beside the built-ins: its learned rules."""
    builtin = {d.id for d in builtin_registry()}
    return frozenset(d.id for d in detectors if d.id not in builtin)


class Loop:
    def __init__(
        self,
        config: LoopConfig,
        cluster: Cluster,
        forge: Forge,
        journal: Journal,
        detectors: Sequence[Detector],
        *,
        completion: Completion | None = None,
        on_event: Callable[[Event], None] = lambda e: None,
        lease: WriterLease | None = None,
    ) -> None:
        self.config = config
        self.cluster = cluster
        self.clock = cluster.clock
        self.forge = forge
        self.journal = journal
        self.detectors = list(detectors)
        self.on_event = on_event
        # a neighbour that does not render: only what this app renders is judged (siblings)
        self.monitor = Monitor(self.detectors, own=config.own if config.undivided else None)
        self.healthy_images = HealthyImages(journal, config.app)
        self.book = IncidentBook(journal, config.app)
        self.incidents = Incidents(
            debounce_s=config.debounce_s,
            clock=self.clock.now,
            namer=self.book.name,
            known=learned_ids(self.detectors),
        )
        self.lease: WriterLease = lease or Lease(
            journal, config.app, this_process(), config.lock_ttl_s
        )
        self.txns = Transactions(
            config,
            cluster,
            forge,
            journal,
            self.detectors,
            on_record=self._recorded,
            may_step=self._may_step,
        )
        self.intents = Intents(journal, config.app)  # what people asked, on any replica
        self.answerer = Answerer(self, completion)
        self.findings: tuple[Finding, ...] = ()
        self.evaluations = 0  # since this process started: has the loop looked at all yet
        self.resumed = False  # the journal's unsettled transactions were carried on
        self._grant: LockGrant | None = None
        self._resolved: dict[str, float] = {}
        self._mine: dict[str, None] = {}  # incidents this process saw or resumed, in order
        self._monitor_due: float | None = None  # None: evaluate at the first tick

    # -- monitoring ------------------------------------------------------------------

    def evaluate(self) -> None:
        snapshot = self.cluster.snapshot()
        failing = dict(self.monitor.failing)
        unsure = {f.fingerprint for f in self.monitor.unsure}
        self.findings, transition = self.monitor.evaluate(snapshot, self.cluster.alerts())
        for det_id, why in self.monitor.failing.items():
            if failing.get(det_id) != why:  # said once, not at every evaluation
                self.emit("detector-failed", f"{det_id} failed, its last findings kept: {why}")
        if new := [f for f in self.monitor.unsure if f.fingerprint not in unsure]:
            shown = "; ".join(f"{f.detector} on {f.resource}" for f in new)
            self.emit("not-judged", f"might be a neighbour's, not judged: {shown}"[:300])
        self.healthy_images.observe(snapshot, self.clock.now())
        self.evaluations += 1
        for f in transition.activated:
            self.emit("detected", f"{f.detector}: {f.summary}", finding=f.to_json())
        known = {i.id for i in self.incidents.open.values()}
        self.incidents, changed = self.incidents.observe(self.config.app, transition, live=snapshot)
        for incident in changed:
            if incident.closed_at is not None:
                self._resolved[incident.id] = incident.closed_at
                self.resolve(incident.id, "its findings cleared.")
                self.txns.refresh_dashboard()
                self.emit("healthy", f"incident {incident.id} resolved", incident=incident.id)
                continue
            row = self.book.seen(incident)
            self._mine.setdefault(incident.id)
            if incident.id not in known:
                again = (
                    " (resumed from the journal)"
                    if self.journal.transactions(incident=incident.id) or row.status != "open"
                    else ""
                )
                self.emit("incident", f"incident {incident.id} opened{again}", incident=incident.id)

    @property
    def healthy(self) -> bool:
        # A rollout still starting (findings held within its deadline) is not healthy yet:
        # it opens no incident, but `run --once` waits until it finishes or its deadline
        # passes and the held findings count.
        return (
            not self.monitor.persistence.active()
            and not self.incidents.open
            and not self.monitor.held
        )

    def tick(self) -> None:
        """One tick, then the clock slept on until the next thing is due (``run``'s wait)."""
        self.step()
        self.clock.sleep(max(0.0, self.next_due() - self.clock.now()))

    def step(self) -> None:
        """One tick; never waits. The monitor evaluates when its interval is due and no
        transaction is in flight; every unsettled transaction of the app advances until it
        must wait (its deadline is kept for :meth:`next_due`), and what follows one that
        settled is answered from the journal; ready incidents are answered when no
        transaction is in flight: at most one per app, not counting those waiting for a
        person."""
        if not self.holds_lease():
            self._evaluate_when_due()
            return
        if self.in_flight():
            # During a transaction its own oracles watch the app (sync wait, window): the
            # monitor's incidents are looked at again an interval after it settles (as
            # when a step drove it to its end), so an incident is not closed under its fix
            # mid-window nor a second one answered meanwhile.
            self._monitor_due = self.clock.now() + self.config.interval_s
        else:
            self._evaluate_when_due()
        if self.resumed:
            self.advance()
        else:
            self.resume()
        for incident in self.incidents.ready():
            if self.in_flight():
                break  # the monitor saw it during a transaction: answered once that settles
            self.answerer.answer(incident)
        self.answerer.resolve_committed_unseen()
        self.answerer.remember_resolved()
        self.act_on_intents()

    def act_on_intents(self) -> None:
        """What people asked for and this tick carries out (:mod:`gitmedic.bot.transactions`):
        queued retries (each a new attempt, or kept queued), then the merges asked for,
        told on their PRs once this tick's steps merged them. A revert asked for, or a
        person's merge to watch, is already a plan in the journal: :meth:`advance`'s."""
        carry_out(self.intents, self.forge, self.retry_queued, self.ports)

    def _evaluate_when_due(self) -> None:
        now = self.clock.now()
        if self._monitor_due is None or now >= self._monitor_due - _EPSILON_S:
            self.evaluate()
            self._monitor_due = now + self.config.interval_s

    def advance(self, *, resuming: bool = False) -> None:
        """Every unsettled transaction of the app, each until it must wait; one that
        settled (or now waits for a person) is followed by its incident's next move."""
        for state in self.txns.unsettled():
            txn_id = state.plan.txn_id
            if resuming:  # a process killed mid-transaction: carried on from the journal
                self.emit("txn", f"resuming {txn_id} at {state.phase.value}", txn=txn_id)
                self._mine.setdefault(state.plan.incident)
            advanced = self.txns.advance(txn_id)
            if advanced.state.settled or advanced.waiting_for_person:
                self.answerer.carry_on(advanced.state)

    def in_flight(self) -> bool:
        """A transaction of the app is unsettled and not waiting for a person's approval."""
        return any(t.phase is not Phase.AWAITING_APPROVAL for t in self.txns.unsettled())

    def next_due(self) -> float:
        """The earliest clock time anything is due: the monitor's next evaluation, or the
        deadline of a transaction that waits (a sync poll, the window's next measurement)."""
        now = self.clock.now()
        txn = self.txns.next_due()
        if txn is not None and self.in_flight():  # the monitor waits for it (see step)
            return txn
        monitor = self._monitor_due if self._monitor_due is not None else now
        return monitor if txn is None else min(monitor, txn)

    def resume(self) -> None:
        """Carry on every unsettled transaction of the journal (one tick's share of each),
        then finish what committed ones left: what the first tick does."""
        self.advance(resuming=True)
        for row in self.book.live():
            self._mine.setdefault(row.id)
            self.answerer.finish(row)
        self.resumed = True

    def _may_step(self, app: str) -> str:
        """The runner's check before each step: "" while this process holds ``app``'s
        writer lease, else who holds it."""
        if self.holds_lease():
            return ""
        holder = self._grant.holder if self._grant else "?"
        return f"{app}'s writer lease is held by {holder}, not by this process"

    def holds_lease(self) -> bool:
        grant = self.lease.hold()
        previous, self._grant = self._grant, grant
        if not grant.acquired:
            if previous is None or previous.acquired or previous.holder != grant.holder:
                self.emit(
                    "lock",
                    f"{self.config.app} is locked by {grant.holder}; waiting",
                    holder=grant.holder,
                )
            return False
        if grant.taken_over_from:
            # Evidence: a writer died (or hung) mid-transaction; its journal is resumed,
            # also by a loop that resumed it before (a replica taking an app back).
            self.resumed = False
            log.warning(
                "took over the writer lock of %s from %s", self.config.app, grant.taken_over_from
            )
            self.emit(
                "lock",
                f"took over the writer lock of {self.config.app} from "
                f"{grant.taken_over_from}, whose lease had expired or whose process "
                "is gone",
                previous=grant.taken_over_from,
            )
        return True

    def retry(self, incident_id: str) -> str:
        """A person's ``/gitmedic retry``: a new attempt for an incident still open, started
        and advanced until it waits; the next ticks carry it on."""
        incident = self.open_incident(incident_id)
        if incident is None:
            return f"incident {incident_id} is not open any more: nothing to retry"
        if not self.holds_lease():
            return f"{self.config.app} is locked by {self._grant.holder if self._grant else '?'}"
        before = len(self.attempts(incident_id).states)
        self.book.mark(incident_id, "open", budget=before + self.config.attempts, since=before)
        self.answerer.answer(incident)
        states = self.attempts(incident_id).states
        last = states[-1] if len(states) > before else None
        return f"attempt {last.plan.attempt}: {last.outcome.value}" if last else "no new attempt"

    def retry_queued(self, incident_id: str) -> str | None:
        """A person's retry of ``incident_id``, recorded as an intent when asked
        (:mod:`gitmedic.bot.transactions.retry`) and carried out by a tick: now, or None to
        keep it queued.

        The retry names an incident (the one in the PR's state marker), but a restarted
        loop reopens the same fault under the id of what fires now, so the retry is
        resolved by its findings: the named incident open: retried; nothing evaluated yet
        since this process started, or a transaction in flight (one per app): kept queued;
        the app's open incident carries a finding the named incident's transactions
        targeted (the journal keeps their fingerprints): retried, in the tick it reopens,
        inside its debounce, so one new attempt and not two; those findings still firing
        without an incident yet: kept queued; otherwise the fault is gone, and the result
        says so."""
        if self.in_flight():
            return None
        if self.open_incident(incident_id) is not None:
            return self.retry(incident_id)
        if self.evaluations == 0:
            return None
        states = self.journal.transactions(incident=incident_id)
        prints = frozenset(fp for state in states for fp in state.plan.targets)
        if not prints:
            return f"the journal has no findings of incident {incident_id}: nothing to retry"
        current = self.incidents.open.get(self.config.app)
        if current is not None and prints & {f.fingerprint for f in current.findings}:
            reopened = f"incident {incident_id}'s fault is open again as incident {current.id}"
            return f"{reopened}; retried it: {self.retry(current.id)}"
        if prints & {f.fingerprint for f in self.findings}:
            return None
        gone = "the fault is gone, so there is nothing to retry"
        return f"incident {incident_id} is closed and its findings are no longer seen: {gone}"

    def open_incident(self, incident_id: str) -> Incident | None:
        """The open incident of that id (open incidents are kept by app, one per app)."""
        return next((i for i in self.incidents.open.values() if i.id == incident_id), None)

    def attempts(self, incident_id: str) -> Attempts:
        row = self.book.row(incident_id)
        budget = int(row.data.get("budget", self.config.attempts)) if row else self.config.attempts
        since = int(row.data.get("since", 0)) if row else 0
        return Attempts.of(self.journal.transactions(incident=incident_id), budget, since)

    def ports(self, checks: Checks | None = None, *, plan: Plan | None = None) -> ForgePorts:
        return self.txns.ports(checks, plan=plan)

    def checks(self, baselines: Mapping[str, Mapping[str, int] | None] | None = None) -> Checks:
        return self.txns.checks(baselines)

    def mu_now(self) -> float:
        return self.checks().mu_before

    def run_once(self, max_seconds: float = 3600.0) -> bool:
        """Tick until healthy, or every open incident is answered and settled (or waits for
        a person); returns healthy. Never healthy while a transaction is in flight."""
        deadline = self.clock.now() + max_seconds
        healthy_since: float | None = None
        while self.clock.now() < deadline:
            self.tick()
            if self.healthy and not self.in_flight():
                # Healthy long enough for an alert's ``for`` window to have fired.
                healthy_since = self.clock.now() if healthy_since is None else healthy_since
                if self.clock.now() - healthy_since >= self.config.settle_s:
                    return True
                continue
            healthy_since = None
            if self._gave_up():
                return False
        return self.healthy and not self.in_flight()

    def _gave_up(self) -> bool:
        open_incidents = list(self.incidents.open.values())
        return bool(open_incidents) and all(self._finished(i.id) for i in open_incidents)

    def _finished(self, incident_id: str) -> bool:
        """Nothing more the loop will do for it: escalated, held, or waiting for a person."""
        row = self.book.row(incident_id)
        if row is not None and row.status == "escalated":
            return True
        move = next_move(self.attempts(incident_id))
        waiting = move.state is not None and move.state.phase is Phase.AWAITING_APPROVAL
        if waiting and move.state is not None and move.state.plan.strategy == MEMORY:
            # The fix is committed; its memory PR waiting for a person (the policy) does
            # not stop the loop from seeing the incident resolve.
            return False
        return move.kind == "stop" or (move.kind == "resume" and waiting)

    # -- reporting -------------------------------------------------------------------

    @property
    def reports(self) -> dict[str, IncidentReport]:
        """The incidents this process saw or resumed, with their attempts from the journal."""
        live = {i.id: i for i in self.incidents.open.values()}
        out: dict[str, IncidentReport] = {}
        for row in (self.journal.incident(i) for i in self._mine):
            if row is None:
                continue
            out[row.id] = IncidentReport.of(
                row, self.attempts(row.id), live.get(row.id), self._resolved.get(row.id)
            )
        return out

    def _recorded(self, state: TxnState) -> None:
        self.lease.hold()  # a step done: the lease runs on
        kind = "measure" if "measurement" in state.records[-1].data else "txn"
        text = f"outcome told on PR #{state.pr}" if state.announced else describe(state)
        self.emit(kind, text, txn=state.plan.txn_id, phase=state.phase.value, pr=state.pr)
        if state.phase is Phase.UNDOING and state.caused:
            shown = "; ".join(f"{f['detector']}: {f['summary']}" for f in state.caused)
            self.emit("caused", f"the candidate caused: {shown}"[:300], txn=state.plan.txn_id)

    def resolve(self, incident_id: str, how: str) -> None:
        """Mark the incident resolved; the issue a person was told in says how and closes."""
        row = self.book.row(incident_id)
        number = row.data.get("issue") if row is not None and row.status != "resolved" else None
        self.book.mark(incident_id, "resolved")
        if isinstance(number, int):
            close_resolved(self.forge, number, how)

    def emit(self, kind: str, text: str, **data: Any) -> None:
        self.on_event(Event(self.clock.now(), kind, text, data))
