"""The whole loop for one manifest repo and one app: detect, respond, transact, remember.

Each interval (on the injected clock) the monitor evaluates the detectors on the
live snapshot; persistent findings open incidents. A ready incident (past its
debounce) is answered under the app's one-writer lock in the journal:

1. the responder proposes (playbook, bisect, LLM, or escalation);
2. an escalation (a runtime-only fault) becomes an issue with the evidence and
   no pull request;
3. a fix is decided by the policy, rendered into a PR body, planned and driven
   through the transaction (PR, gate, merge, sync, verify, commit or revert);
4. on REVERTED (or REJECTED) with attempts left, the responder proposes again
   with the feedback. A candidate that cleared its targets but caused new
   findings once deployed (seen live when the transaction decides to undo it)
   is extended: its edits are kept and what it uncovered is fixed on top
   (:meth:`Responder.extend`). Otherwise playbooks that failed are set aside,
   and the LLM (when one is configured) is told why the candidate was undone;
   a proposal that would repeat an undone candidate is escalated instead;
5. on COMMITTED, reflection writes memory (a PR gated by the memory guard and
   merged only as the policy allows, :mod:`gitmedic.bot.memory_pr`) and the
   outcome record.

A transaction waiting for a human's approval stops the attempt loop (status
``held``); the journal keeps it and ``serve`` resumes it. Nothing here sleeps
on the wall clock and nothing calls an LLM unless a finding is left that the
deterministic strategies cannot explain: the steady state costs no tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmedic.bot.loop.checks import Checks, runtime_checks
from gitmedic.bot.loop.monitor import Monitor
from gitmedic.bot.loop.remember import remember, report_escalation
from gitmedic.bot.loop.report import Event, IncidentReport, describe, finished_unfixed
from gitmedic.bot.loop.wiring import (
    Cluster,
    build_ports,
    decision_for,
    git,
    plan_of,
    pr_body,
)
from gitmedic.bot.render.pr_body import VerificationPlan
from gitmedic.bot.responder.incident import Incident, Incidents
from gitmedic.bot.responder.llm import Completion, with_feedback
from gitmedic.bot.responder.playbooks import Playbook
from gitmedic.bot.responder.proposal import Proposal, hand_over
from gitmedic.bot.responder.responder import Responder, _all_playbooks
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.config import LlmConfig, PolicyConfig, ProbeConfig
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.transaction import (
    Journal,
    MachineConfig,
    Outcome,
    Phase,
    Plan,
    TxnState,
)
from gitmedic.reconciler.transaction.driver import step

HOLDER = "gitmedic-loop"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoopConfig:
    app: str
    repo: Path
    path: str = ""
    namespace: str = "default"
    interval_s: float = 10.0
    debounce_s: float = 30.0
    attempts: int = 3
    sync_timeout_s: float = 300.0
    window_s: float = 60.0
    oracle_interval_s: float = 10.0
    failure_limit: int = 1  # worse measurements an oracle tolerates in the window (config)
    probes: tuple[ProbeConfig, ...] = ()  # HTTP probes the verification window watches
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    llm: LlmConfig | None = None
    lock_ttl_s: float = 3600.0
    settle_s: float = 300.0  # --once: healthy this long (alerts' for-windows) is healthy


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
    ) -> None:
        self.config = config
        self.cluster = cluster
        self.clock = cluster.clock
        self.forge = forge
        self.journal = journal
        self.detectors = list(detectors)
        self.completion = completion
        self.on_event = on_event
        self.monitor = Monitor(self.detectors)
        self.incidents = Incidents(debounce_s=config.debounce_s, clock=self.clock.now)
        self.reports: dict[str, IncidentReport] = {}
        self.findings: tuple[Any, ...] = ()
        self.evaluations = 0  # since this process started: has the loop looked at all yet

    # -- monitoring ------------------------------------------------------------------

    def evaluate(self) -> None:
        snapshot = self.cluster.snapshot()
        self.findings, transition = self.monitor.evaluate(snapshot, self.cluster.alerts())
        self.evaluations += 1
        for f in transition.activated:
            self.emit("detected", f"{f.detector}: {f.summary}", finding=f.to_json())
        self.incidents, changed = self.incidents.observe(self.config.app, transition, live=snapshot)
        for incident in changed:
            report = self.reports.get(incident.id)
            if report is None:
                self.reports[incident.id] = IncidentReport(incident)
                self.emit("incident", f"incident {incident.id} opened", incident=incident.id)
            elif incident.closed_at is not None:
                report.incident, report.resolved_at = incident, incident.closed_at
                self.emit("healthy", f"incident {incident.id} resolved", incident=incident.id)

    @property
    def healthy(self) -> bool:
        return not self.monitor.persistence.active() and not self.incidents.open

    def tick(self) -> None:
        """One interval: evaluate, answer ready incidents not answered yet, sleep."""
        self.step()
        self.clock.sleep(self.config.interval_s)

    def step(self) -> None:
        """Evaluate and answer ready incidents not answered yet (``serve`` waits itself)."""
        self.evaluate()
        for incident in self.incidents.ready():
            report = self.reports[incident.id]
            if not report.transactions and not report.escalated:
                self.respond(incident)

    def retry(self, incident_id: str) -> str:
        """A person's ``/gitmedic retry``: new attempts for an incident still open."""
        incident = self.open_incident(incident_id)
        if incident is None:
            return f"incident {incident_id} is not open any more: nothing to retry"
        report = self.respond(incident)
        last = report.transactions[-1] if report.transactions else None
        return f"attempt {last.plan.attempt}: {last.outcome.value}" if last else "no new attempt"

    def open_incident(self, incident_id: str) -> Incident | None:
        """The open incident of that id (open incidents are kept by app, one per app)."""
        return next((i for i in self.incidents.open.values() if i.id == incident_id), None)

    def ports(self, checks: Checks | None = None, *, plan: Plan | None = None) -> Any:
        """The transaction ports of this app, verifying with ``checks`` (baselines taken
        now), or for a transaction already planned, with its plan's recorded baselines."""
        cfg = self.config
        if checks is None:
            checks = self.checks(plan.baselines if plan is not None and plan.baselines else None)
        return build_ports(cfg.repo, cfg.path, cfg.namespace, self.forge, self.cluster,
                           self.detectors, checks)  # fmt: skip

    def checks(self, baselines: Mapping[str, Mapping[str, int] | None] | None = None) -> Checks:
        """The oracles of the verification window, with their baselines taken now (or given)."""
        cfg, cluster = self.config, self.cluster
        return runtime_checks(cluster.snapshot, cfg.namespace, cluster.alerts_oracle(),
                              cfg.probes, self.detectors, window_s=cfg.window_s,
                              interval_s=cfg.oracle_interval_s,
                              failure_limit=cfg.failure_limit, baselines=baselines)  # fmt: skip

    def mu_now(self) -> float:
        return self.checks().mu_before

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
        open_reports = [self.reports[i.id] for i in self.incidents.open.values()]
        return bool(open_reports) and all(r.escalated or finished_unfixed(r) for r in open_reports)

    # -- responding ------------------------------------------------------------------

    def respond(self, incident: Incident) -> IncidentReport:
        report = self.reports.setdefault(incident.id, IncidentReport(incident))
        grant = self.journal.acquire(
            self.config.app, HOLDER, self.clock.now(), self.config.lock_ttl_s
        )
        if not grant.acquired:
            self.emit("lock", f"{self.config.app} is locked by {grant.holder}; waiting")
            return report
        if grant.taken_over_from:
            # Evidence: a writer died (or hung) mid-transaction; its journal is resumed.
            log.warning("took over the writer lock of %s from %s (expired)",
                        self.config.app, grant.taken_over_from)  # fmt: skip
            self.emit("lock", f"took over the writer lock of {self.config.app} from "
                      f"{grant.taken_over_from}, whose lease had expired",
                      previous=grant.taken_over_from)  # fmt: skip
        try:
            self._attempts(incident, report)
        finally:
            self.journal.release(self.config.app, HOLDER)
        return report

    def _attempts(self, incident: Incident, report: IncidentReport) -> None:
        failed_playbooks: set[str] = set()
        feedback: list[str] = []
        tried: list[tuple[dict[str, Any], ...]] = []
        undone: tuple[Proposal, TxnState] | None = None
        # A retry asked by a person continues the numbering (branches and txn ids are unique).
        first = len(self.journal.transactions(incident=incident.id)) + 1
        for attempt in range(first, first + self.config.attempts):
            extended = self._retry_proposal(incident, undone, report) if undone else None
            proposal = extended or self._propose(incident, failed_playbooks, feedback)
            edits = tuple(e.to_json() for e in proposal.edits)
            if not proposal.is_fix or edits in tried:
                # Nothing new to try: a person decides, with what was tried in the issue.
                why = f"attempt {attempt} would repeat a candidate already undone"
                self._escalate(incident, hand_over(proposal, why) if proposal.is_fix
                               else proposal, report)  # fmt: skip
                return
            tried.append(edits)
            state = self._transact(incident, proposal, attempt, feedback)
            report.transactions.append(state)
            if state.outcome is Outcome.COMMITTED:
                self._remember(incident, proposal, state, report)
                return
            if state.outcome not in (Outcome.REVERTED, Outcome.REJECTED):
                return  # held for a person, or failed with an alarm: never pile on
            if proposal.playbook:
                failed_playbooks.add(proposal.playbook)
            undone = (proposal, state)
            feedback = [f"attempt {attempt} ({proposal.strategy}) {state.outcome.value}: "
                        f"{state.reason}", *state.feedback]  # fmt: skip
        if undone is not None:  # every attempt was undone
            why = f"all {self.config.attempts} attempt(s) were undone ({'; '.join(feedback)[:500]})"
            self._escalate(incident, hand_over(undone[0], why), report)

    def _retry_proposal(
        self, incident: Incident, undone: tuple[Proposal, TxnState], report: IncidentReport
    ) -> Proposal | None:
        """The undone candidate extended by fixes for what it caused, when that explains it."""
        proposal, state = undone
        caused = report.caused.get(state.plan.txn_id, ())
        if not caused:
            return None
        repo = ManifestRepo(self.config.repo, self.config.path, self.config.namespace)
        responder = Responder(repo, detectors=_registry(self.detectors),
                              playbooks=_all_playbooks(repo))  # fmt: skip
        extended = responder.extend(incident, proposal, caused)
        if extended is not None:
            shown = ", ".join(f"{f.detector} on {f.resource}" for f in caused)
            self.emit("proposal", f"{extended.strategy}: keep attempt {state.plan.attempt}'s "
                      f"change and fix what it caused ({shown})", strategy=extended.strategy,
                      playbook=extended.playbook, tokens=0)  # fmt: skip
        return extended

    def _propose(self, incident: Incident, failed: set[str], feedback: Sequence[str]) -> Proposal:
        repo = ManifestRepo(self.config.repo, self.config.path, self.config.namespace)
        books: list[Playbook] = [p for p in _all_playbooks(repo) if p.id not in failed]
        completion = with_feedback(self.completion, feedback) if feedback else self.completion
        responder = Responder(repo, detectors=_registry(self.detectors), playbooks=books,
                              llm=self.config.llm, completion=completion)  # fmt: skip
        proposal = responder.propose(incident)
        first = proposal.diagnosis.splitlines()[0] if proposal.diagnosis else ""
        self.emit("proposal", f"{proposal.strategy}: {first}", strategy=proposal.strategy,
                  playbook=proposal.playbook, tokens=proposal.tokens)  # fmt: skip
        return proposal

    def _transact(
        self, incident: Incident, proposal: Proposal, attempt: int, feedback: Sequence[str]
    ) -> TxnState:
        cfg = self.config
        now = self.clock.now()
        decision = decision_for(proposal, incident, cfg.policy, now)
        checks = self.checks()  # the checkpoint: what the window runs, and mu before
        vplan = VerificationPlan(self.cluster.engine_name, cfg.sync_timeout_s, checks.plan,
                                 cfg.window_s, attempt, cfg.attempts,
                                 revert_at_once=cfg.policy.reverts_at_once)  # fmt: skip
        body = pr_body(proposal, incident, decision, vplan)
        base = git(cfg.repo, "rev-parse", self.forge.default_branch())
        plan = plan_of(proposal, incident, attempt=attempt, base_sha=base,
                       mu_pre=checks.mu_before, decision=decision, body=body,
                       feedback=feedback, baselines=checks.baselines(),
                       revert_auto_merge=cfg.policy.reverts_at_once)  # fmt: skip
        ports = self.ports(checks)
        before = frozenset(f.fingerprint for f in self.findings)
        self.journal.create(plan, now)
        self.emit("txn", f"attempt {attempt}: {plan.title} (risk {decision.risk}, "
                  f"{'auto-merge' if decision.auto_merge else 'needs approval'})",
                  txn=plan.txn_id)  # fmt: skip
        state = self.drive(plan.txn_id, ports, on_undo=lambda: self._caused(before))
        return state

    def _caused(self, before: frozenset[str]) -> tuple[Finding, ...]:
        """What fires now (the candidate deployed) that did not before it: not info."""
        now = run_detectors(self.detectors, self.cluster.snapshot()).findings
        return tuple(f for f in now if f.fingerprint not in before
                     and f.severity is not Severity.INFO)  # fmt: skip

    def drive(
        self,
        txn_id: str,
        ports: Any,
        on_undo: Callable[[], tuple[Finding, ...]] | None = None,
    ) -> TxnState:
        """Step the transaction until terminal or waiting for a person (not blocking on one).

        ``on_undo`` is asked once, at the step that decides to undo, while the
        candidate still runs: what it caused is gone once the revert deploys.
        """
        machine = MachineConfig(sync_timeout_s=self.config.sync_timeout_s, poll_s=5.0)
        state = self.journal.load(txn_id)
        while not state.phase.terminal and state.phase is not Phase.AWAITING_APPROVAL:
            before = len(state.records)
            state, wait = step(self.journal, txn_id, ports, self.clock, machine)
            if len(state.records) > before:
                self.emit("txn", describe(state), txn=txn_id, phase=state.phase.value, pr=state.pr)
                if state.phase is Phase.UNDOING and on_undo is not None:
                    self._observe_undo(txn_id, on_undo())
            if wait > 0:
                self.clock.sleep(wait)
        return state

    def _observe_undo(self, txn_id: str, caused: tuple[Finding, ...]) -> None:
        incident = self.journal.load(txn_id).plan.incident
        report = self.reports.get(incident)
        if report is not None and caused:
            report.caused[txn_id] = caused
            shown = "; ".join(f"{f.detector}: {f.summary}" for f in caused)
            self.emit("caused", f"the candidate caused: {shown}"[:300], txn=txn_id)

    def _escalate(self, incident: Incident, proposal: Proposal, report: IncidentReport) -> None:
        number = report_escalation(self.forge, incident, proposal)
        report.escalated = f"issue #{number}"
        after = f"after {len(report.transactions)} undone attempt(s)" if report.transactions else ""
        self.emit("escalated", f"escalated in issue #{number}: " + (after or "no pull request"),
                  issue=number, tokens=proposal.tokens)  # fmt: skip

    def _remember(
        self, incident: Incident, proposal: Proposal, state: TxnState, report: IncidentReport
    ) -> None:
        undone = [t for t in report.transactions if t.outcome is not Outcome.COMMITTED]
        caused = tuple(f for t in undone for f in report.caused.get(t.plan.txn_id, ()))
        pr = remember(self.config, self.forge, incident, proposal, state, self.clock.now(),
                      undone=tuple(Edit.from_json(e) for t in undone for e in t.plan.edits),
                      caused=caused, live_after=self.cluster.snapshot())  # fmt: skip
        report.memory_pr = pr.number if pr is not None else None
        if pr is not None:
            state_text = "merged" if pr.merged else "waits"
            self.emit("memory", f"memory PR #{pr.number} {state_text}: {pr.why}"[:300],
                      pr=pr.number, merged=pr.merged)  # fmt: skip

    def emit(self, kind: str, text: str, **data: Any) -> None:
        self.on_event(Event(self.clock.now(), kind, text, data))


def _registry(detectors: Sequence[Detector]) -> Any:
    from gitmedic.detectors.registry import Registry

    return Registry(detectors)
