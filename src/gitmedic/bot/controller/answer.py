"""Answering an incident: follow the attempt policy's moves until it must wait.

A move never waits: a transaction is started and advanced until it must wait (a
sync poll, the verification window's next measurement, a person), and the loop's
next ticks advance it; when it settles, :meth:`Answerer.carry_on` takes the
incident's next move.

Each move comes from :func:`~gitmedic.bot.controller.attempts.next_move` over the
journal, so answering is the same whether the process has run all along or was
just restarted:

1. the responder proposes (playbook, bisect, LLM, or escalation); an escalation
   (a runtime-only fault) becomes an issue with the evidence and no PR;
2. a fix is decided by the policy, rendered into a PR body, planned and stepped
   by the runner over ticks (PR, gate, merge, sync, verify, commit or revert, announce);
3. after an undone attempt with budget left, the responder proposes again with
   the feedback. A candidate that cleared its targets but caused new findings
   once deployed (recorded when the machine decided to undo it) is extended:
   its edits are kept and what it uncovered is fixed on top
   (:meth:`Responder.extend`). Otherwise playbooks that failed are set aside
   and the LLM (when configured) is told why; a proposal that would repeat an
   undone candidate is escalated instead;
4. a committed fix is remembered: reflection's memory PR, a transaction too.

A transaction waiting for a person's approval stops the moves (status ``held``);
the journal keeps it and the next process (or ``serve``'s next step) resumes it.
Every transaction that ends failed or held, or waits for approval, opens or
updates the incident's issue (:mod:`.tell`), closed again when it resolves.
"""

from __future__ import annotations

from gitmedic.bot.controller.answer_ports import LoopPorts
from gitmedic.bot.controller.attempts import MEMORY, Attempts, next_move, proposal_of
from gitmedic.bot.controller.incidents import incident_of
from gitmedic.bot.controller.remember import reflect_fix, report_escalation
from gitmedic.bot.controller.tell import needs_telling, tell_held, told_key
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.levers import Bounds
from gitmedic.bot.responder.llm import Completion, with_feedback
from gitmedic.bot.responder.playbooks import Playbook
from gitmedic.bot.responder.proposal import Proposal, hand_over
from gitmedic.bot.responder.responder import Responder, _all_playbooks
from gitmedic.bot.responder.strategies import Limits
from gitmedic.detectors.registry import Registry
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.transaction import IncidentRow, TxnState


class Answerer:
    def __init__(self, loop: LoopPorts, completion: Completion | None) -> None:
        self.loop = loop
        self.completion = completion

    def answer(self, incident: Incident) -> None:
        """Follow the incident's moves until it is done or must wait."""
        loop = self.loop
        row = loop.book.row(incident.id)
        while row is not None and row.status == "open":
            if not self._move(incident, loop.attempts(incident.id)):
                return
            row = loop.book.row(incident.id)

    def carry_on(self, state: TxnState) -> None:
        """A transaction a tick advanced settled, or waits for a person now: its incident's
        next move, from the journal (tell, the next attempt, remember, escalate). An incident
        that resolved meanwhile is :meth:`remember_resolved`'s."""
        self._memory_settled(state)
        row = self.loop.book.row(state.plan.incident)
        if row is None or row.status != "open":
            return
        incident = self.loop.open_incident(row.id) or incident_of(row)
        self._tell(incident, state)
        if state.settled:
            self.answer(incident)

    def finish(self, row: IncidentRow) -> None:
        """After a restart: remember a fix that committed before the kill."""
        move = next_move(self.loop.attempts(row.id))
        if row.status == "open" and move.kind in ("remember", "done"):
            self._move(incident_of(row), self.loop.attempts(row.id))

    def resolve_committed_unseen(self) -> None:
        """Resolve a live incident this process never saw firing once its fix committed and
        the app is healthy. A person's approval can carry a fix that an earlier process
        proposed through ``serve`` before this process's monitor sees the fault again (a
        workload still starting holds its findings back, and the fix's rollout replaces it):
        no incident of this process closes then, so without this its journal row stayed
        open and the person's issue was never told how it resolved. ``remember_resolved``
        then remembers the fix, as for an incident whose findings cleared."""
        loop = self.loop
        if not loop.healthy:
            return
        for row in loop.book.live():
            attempts = loop.attempts(row.id)
            if row.status != "open" or loop.open_incident(row.id) or attempts.committed is None:
                continue
            loop.resolve(row.id, _how(attempts))
            loop.txns.refresh_dashboard()
            loop.emit("healthy", f"incident {row.id} resolved", incident=row.id)

    def remember_resolved(self) -> None:
        """Remember a fix kept after its incident resolved: a person's approval carried it
        through ``serve``, whose monitor saw the app heal before the fix's window ended.
        Each resolved incident is looked at once (``remembered`` in its row)."""
        loop = self.loop
        for row in loop.journal.incidents(loop.config.app, status="resolved"):
            if row.data.get("remembered"):
                continue
            attempts = loop.attempts(row.id)
            move = next_move(attempts)
            if move.kind == "resume":
                continue  # a transaction still runs: its incident is looked at again later
            if move.kind == "remember" and move.state is not None:
                self._remember(incident_of(row), attempts, move.state)
            loop.book.mark(row.id, "resolved", remembered=True)

    def _move(self, incident: Incident, attempts: Attempts) -> bool:
        """One move; False when the incident must wait (a person, or nothing left)."""
        move = next_move(attempts)
        if move.kind == "resume" and move.state is not None:
            state = self.loop.txns.advance(move.state.plan.txn_id).state
            self._memory_settled(state)
            self._tell(incident, state)
            return state.settled
        if move.kind == "remember" and move.state is not None:
            self._remember(incident, attempts, move.state)
            return True
        if move.kind == "done":
            self.loop.resolve(incident.id, _how(attempts))
            self.loop.txns.refresh_dashboard()
            return False
        if move.kind == "escalate":
            last = attempts.last_undone
            proposal = proposal_of(last) if last is not None else None
            if proposal is not None:
                self._escalate(incident, hand_over(proposal, move.why), attempts)
            return False
        if move.kind == "propose":
            return self._attempt(incident, attempts, move.attempt)
        if move.kind == "stop" and move.state is not None:
            self._tell(incident, move.state)
        return False  # stop: held for a person, or failed with an alarm

    def _attempt(self, incident: Incident, attempts: Attempts, attempt: int) -> bool:
        last = attempts.last_undone
        extended = self._extension(incident, attempts, last) if last is not None else None
        proposal = extended or self._propose(incident, attempts)
        edits = tuple(e.to_json() for e in proposal.edits)
        if not proposal.is_fix or edits in attempts.tried:
            # Nothing new to try: a person decides, with what was tried in the issue.
            why = f"attempt {attempt} would repeat a candidate already undone"
            self._escalate(
                incident, hand_over(proposal, why) if proposal.is_fix else proposal, attempts
            )
            return False
        plan = self.loop.txns.start(
            incident, proposal, attempt, attempts.feedback, attempts.last_undone
        )
        decision = "auto-merge" if plan.auto_merge else "needs approval"
        self.loop.emit("txn", f"attempt {attempt}: {plan.title} ({decision})", txn=plan.txn_id)
        state = self.loop.txns.advance(plan.txn_id).state
        self._tell(incident, state)
        return state.settled

    def _tell(self, incident: Incident, state: TxnState) -> None:
        """A failed or held transaction opens or updates the incident's issue, once."""
        row = self.loop.book.row(incident.id)
        if row is None or not needs_telling(state) or row.data.get("told") == told_key(state):
            return
        number = tell_held(self.loop.forge, incident, state)
        self.loop.book.mark(incident.id, row.status, issue=number, told=told_key(state))
        told = f"told a person in issue #{number}: {state.phase.value}"
        self.loop.emit("escalated", told, issue=number)

    def _extension(
        self, incident: Incident, attempts: Attempts, undone: TxnState
    ) -> Proposal | None:
        """The undone candidate extended by fixes for what it caused, when that explains it."""
        caused = attempts.caused(undone)
        if not caused:
            return None
        cfg = self.loop.config
        repo = ManifestRepo(cfg.repo, cfg.path, cfg.namespace, deployer=cfg.deployer)
        responder = Responder(
            repo, detectors=Registry(self.loop.detectors), playbooks=_all_playbooks(repo)
        )
        extended = responder.extend(incident, proposal_of(undone), caused, undone.feedback)
        if extended is not None:
            shown = ", ".join(f"{f.detector} on {f.resource}" for f in caused)
            self._emit_proposal(
                extended,
                f"keep attempt {undone.plan.attempt}'s change and fix what it caused ({shown})",
            )
        return extended

    def _propose(self, incident: Incident, attempts: Attempts) -> Proposal:
        cfg = self.loop.config
        repo = ManifestRepo(cfg.repo, cfg.path, cfg.namespace, deployer=cfg.deployer)
        failed = attempts.failed_playbooks
        books: list[Playbook] = [p for p in _all_playbooks(repo) if p.id not in failed]
        feedback = attempts.feedback
        completion = with_feedback(self.completion, feedback) if feedback else self.completion
        responder = Responder(
            repo,
            detectors=Registry(self.loop.detectors),
            playbooks=books,
            llm=cfg.llm,
            completion=completion,
            healthy=self.loop.healthy_images.seen(),
            limits=Limits(levers=Bounds.of(cfg.levers)),
        )
        # The cluster as it is now, not as it was when the incident last grew: a runtime
        # lever judges how long pods have been un-Ready.
        proposal = responder.propose(incident.with_snapshots(self.loop.cluster.snapshot(), None))
        first = proposal.diagnosis.splitlines()[0] if proposal.diagnosis else ""
        self._emit_proposal(proposal, first)
        return proposal

    def _emit_proposal(self, proposal: Proposal, text: str) -> None:
        self.loop.emit(
            "proposal",
            f"{proposal.strategy}: {text}",
            strategy=proposal.strategy,
            playbook=proposal.playbook,
            tokens=proposal.tokens,
        )

    def _escalate(self, incident: Incident, proposal: Proposal, attempts: Attempts) -> None:
        number = report_escalation(self.loop.forge, incident, proposal, attempts.undone)
        self.loop.book.mark(incident.id, "escalated", escalated=f"issue #{number}")
        self.loop.txns.refresh_dashboard()
        undone = len(attempts.undone)
        after = f"after {undone} undone attempt(s)" if undone else "no pull request"
        self.loop.emit(
            "escalated",
            f"escalated in issue #{number}: {after}",
            issue=number,
            tokens=proposal.tokens,
        )

    def _remember(self, incident: Incident, attempts: Attempts, state: TxnState) -> None:
        loop = self.loop
        undone = attempts.undone
        caused = tuple(f for t in undone for f in attempts.caused(t))
        change = reflect_fix(
            loop.config,
            incident,
            proposal_of(state),
            state,
            loop.clock.now(),
            undone=tuple(Edit.from_json(e) for t in undone for e in t.plan.edits),
            caused=caused,
            live_after=loop.cluster.snapshot(),
        )
        if not change.files:
            loop.resolve(incident.id, _how(attempts))
            return
        plan = loop.txns.start_memory(incident.id, change)
        self._memory_settled(loop.txns.advance(plan.txn_id).state)

    def _memory_settled(self, memory: TxnState) -> None:
        """Said once the memory PR's transaction settled (at once, or at a later tick)."""
        if memory.plan.strategy != MEMORY or not memory.settled:
            return
        if memory.merge_sha:
            self.loop.emit("memory", f"memory PR #{memory.pr} merged (guard passed)", pr=memory.pr)
        else:
            self.loop.emit(
                "memory",
                f"memory PR #{memory.pr} {memory.outcome.value}: {memory.reason}",
                pr=memory.pr,
            )


def _how(attempts: Attempts) -> str:
    committed = attempts.committed
    if committed is None:
        return "the incident resolved."
    return f"PR #{committed.pr} committed: deployed and verified healthy."
