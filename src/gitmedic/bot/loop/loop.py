"""The whole loop for one manifest repo and one app: detect, respond, transact, remember.

The concerns live in their own modules; this one sequences them:

- monitor (:mod:`~gitmedic.bot.loop.monitor`): each interval (on the injected
  clock) the detectors run on the live snapshot; persistent findings open
  incidents, named and kept in the journal (:mod:`~gitmedic.bot.loop.incidents`);
- attempt policy (:mod:`~gitmedic.bot.loop.attempts`): what an incident needs
  next, from its attempts in the journal: resume, propose attempt ``n`` (with the
  feedback of the undone one, extending it when it caused what it uncovered),
  remember, escalate, or stop for a person;
- runner (:mod:`~gitmedic.bot.loop.transact` over
  :class:`~gitmedic.reconciler.transaction.Runner`): plans, ports, one step per call;
- memory (:mod:`~gitmedic.bot.loop.memory_txn`): the memory PR, a transaction too.

Only the holder of the app's writer lease acts (:mod:`~gitmedic.reconciler.transaction.lease`):
one holder id per process, renewed at every step. On its first step the loop
resumes every transaction the journal holds unsettled (a process killed
mid-transaction) before it proposes anything new. Nothing here sleeps on the
wall clock and nothing calls an LLM unless a finding is left that the
deterministic strategies cannot explain: the steady state costs no tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gitmedic.bot.loop.answer import Answerer
from gitmedic.bot.loop.attempts import MEMORY, Attempts, next_move
from gitmedic.bot.loop.checks import Checks
from gitmedic.bot.loop.config import LoopConfig
from gitmedic.bot.loop.healthy_images import HealthyImages
from gitmedic.bot.loop.incidents import IncidentBook
from gitmedic.bot.loop.monitor import Monitor
from gitmedic.bot.loop.report import Event, IncidentReport, describe
from gitmedic.bot.loop.tell import close_resolved
from gitmedic.bot.loop.transact import Transactions
from gitmedic.bot.loop.wiring import Cluster
from gitmedic.bot.responder.incident import Incident, Incidents
from gitmedic.bot.responder.llm import Completion
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import Journal, LockGrant, Phase, Plan, TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.lease import Lease, WriterLease, this_process

__all__ = ["Loop", "LoopConfig", "learned_ids"]
log = logging.getLogger(__name__)


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
        self.monitor = Monitor(self.detectors)
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
            config, cluster, forge, journal, self.detectors, on_record=self._recorded
        )
        self.answerer = Answerer(self, completion)
        self.findings: tuple[Finding, ...] = ()
        self.evaluations = 0  # since this process started: has the loop looked at all yet
        self.resumed = False  # the journal's unsettled transactions were carried on
        self._grant: LockGrant | None = None
        self._resolved: dict[str, float] = {}
        self._mine: dict[str, None] = {}  # incidents this process saw or resumed, in order

    # -- monitoring ------------------------------------------------------------------

    def evaluate(self) -> None:
        snapshot = self.cluster.snapshot()
        failing = dict(self.monitor.failing)
        self.findings, transition = self.monitor.evaluate(snapshot, self.cluster.alerts())
        for det_id, why in self.monitor.failing.items():
            if failing.get(det_id) != why:  # said once, not at every evaluation
                self.emit("detector-failed", f"{det_id} failed, its last findings kept: {why}")
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
        """One interval: evaluate, answer ready incidents not answered yet, sleep."""
        self.step()
        self.clock.sleep(self.config.interval_s)

    def step(self) -> None:
        """Resume the journal's work, evaluate, answer ready incidents (``serve`` waits itself)."""
        if not self.holds_lease():
            self.evaluate()
            return
        if not self.resumed:
            self.resume()
        self.evaluate()
        for incident in self.incidents.ready():
            self.answerer.answer(incident)
        self.answerer.resolve_committed_unseen()
        self.answerer.remember_resolved()

    def resume(self) -> None:
        """Carry on every unsettled transaction, then finish what committed ones left."""
        for state in self.txns.unsettled():
            self.emit(
                "txn", f"resuming {state.plan.txn_id} at {state.phase.value}", txn=state.plan.txn_id
            )
            self._mine.setdefault(state.plan.incident)
            self.txns.drive(state.plan.txn_id)
        for row in self.book.live():
            self._mine.setdefault(row.id)
            self.answerer.finish(row)
        self.resumed = True

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
        """A person's ``/gitmedic retry``: new attempts for an incident still open."""
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

    def drive(self, txn_id: str, ports: ForgePorts | None = None) -> TxnState:
        """Step the transaction until settled or waiting for a person (the one runner)."""
        if ports is None:
            return self.txns.drive(txn_id)
        return self.txns.runner.drive(txn_id, ports, stop_for_person=True)

    def run_once(self, max_seconds: float = 3600.0) -> bool:
        """Until healthy, or every open incident is answered and settled; returns healthy."""
        deadline = self.clock.now() + max_seconds
        healthy_since: float | None = None
        while self.clock.now() < deadline:
            self.tick()
            if self.healthy:
                # Healthy long enough for an alert's ``for`` window to have fired.
                healthy_since = self.clock.now() if healthy_since is None else healthy_since
                if self.clock.now() - healthy_since >= self.config.settle_s:
                    return True
                continue
            healthy_since = None
            if self._gave_up():
                return False
        return self.healthy

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
