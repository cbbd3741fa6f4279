"""After an incident: memory for a committed fix, an issue for an escalation.

Memory: reflection (:func:`~gitmedic.bot.memory.reflection.reflect`) gets the
incident, the fix and the desired states before and after it; its files (the
outcome record, and a learned detector and playbook when one validated) become
the memory PR on ``gitmedic/<incident>/memory``, a transaction like any other
(:mod:`gitmedic.bot.transactions.memory`: the runner opens, gates with the memory
guard, merges and announces it, resumable at any kill). Reflection runs once
per incident: its files are recorded in that transaction's plan, so the
outcome record is written once however often the process restarts.

Escalation: a runtime-only fault has no fix in Git, so it gets an issue (one per
incident, idempotent) with the diagnosis and the evidence, and no pull request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from gitmedic.bot.controller.tell import LABELS, issue_title
from gitmedic.bot.memory.outcomes import OutcomeRecord
from gitmedic.bot.memory.reflection import MemoryChange, ReflectionInput, reflect
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.bot.render.escalation import EscalationInput, attempt_of, render_escalation
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.transaction import TxnState

if TYPE_CHECKING:
    from gitmedic.bot.controller.config import LoopConfig


def reflect_fix(
    config: LoopConfig,
    incident: Incident,
    proposal: Proposal,
    state: TxnState,
    now: float,
    *,
    undone: tuple[Edit, ...] = (),
    caused: tuple[Finding, ...] = (),
    live_after: Snapshot | None = None,
) -> MemoryChange:
    """Reflection on a committed fix: the memory PR's files (none: nothing to remember).

    ``undone``: the edits of the candidates deployed and reverted before this one, with what
    they ``caused``; with the live snapshots (the incident's, and ``live_after``
    the fix) reflection can learn the lesson of the undone attempts.
    """
    where = config.repo / config.path if config.path else config.repo
    ns, deployer = config.namespace, config.deployer
    before = load_desired(where, rev=state.plan.base_sha, namespace=ns, deployer=deployer).snapshot
    after = load_desired(where, rev=state.merge_sha, namespace=ns, deployer=deployer).snapshot
    inp = ReflectionInput(
        incident=incident.id,
        app=config.app,
        findings=incident.findings,
        strategy=proposal.strategy,
        edits=proposal.edits,
        diagnosis=proposal.diagnosis,
        introducing_commit=proposal.commit.sha if proposal.commit else "",
        snapshots=Snapshots(before, after, after),
        outcome=_outcome(config.app, incident, proposal, state, now),
        undone=undone,
        caused=caused,
        live=Snapshots(incident.live, live_after, live_after)
        if incident.live is not None and live_after is not None
        else None,
    )
    return reflect(config.repo, inp)


def _outcome(
    app: str, incident: Incident, proposal: Proposal, state: TxnState, now: float
) -> OutcomeRecord:
    return OutcomeRecord(
        id=incident.id,
        commits=(state.merge_sha,),
        detectors=tuple(sorted({f.detector for f in incident.findings})),
        playbooks=(proposal.playbook,) if proposal.playbook else (),
        strategy=proposal.strategy,
        classification=proposal.playbook or incident.findings[0].detector,
        tokens=proposal.tokens,
        cost_usd=proposal.cost_usd,
        opened_at=_iso(incident.opened_at),
        # A restarted sim starts its clock again: never close before the incident opened.
        closed_at=_iso(max(now, incident.opened_at)),
        playbooks_applied=(proposal.playbook,) if proposal.playbook else (),
        app=app,
    )


def report_escalation(
    forge: Forge, incident: Incident, proposal: Proposal, tried: Sequence[TxnState] = ()
) -> int:
    """Open or update the incident's issue: no fix can be deployed (``tried``: the attempts
    made, each undone)."""
    reason = proposal.escalation.reason if proposal.escalation else proposal.diagnosis
    if tried:
        happened = (
            f"gitmedic made {len(tried)} attempt(s) to fix incident `{incident.id}` in "
            f"**{incident.app}**; each was undone, and it has nothing new to try."
        )
        todo = (
            "Read the attempts' PRs and their reverts below for what the oracles found; fix "
            "the manifests by hand, or change what made the attempts fail and comment "
            "`/gitmedic retry` on the last attempt's PR."
        )
    else:
        happened = (
            f"gitmedic found a fault in **{incident.app}** that no change to the manifests "
            "explains, so it opened no pull request."
        )
        todo = "Look at the runtime: credentials, data, the network, the nodes."
    data = EscalationInput(
        app=incident.app,
        incident=incident.id,
        happened=happened,
        todo=todo,
        reason=reason,
        diagnosis=proposal.diagnosis if proposal.diagnosis != reason else "",
        attempts=tuple(attempt_of(s) for s in tried),
        findings=tuple(proposal.evidence),
    )
    issue = forge.ensure_issue(issue_title(incident.id), render_escalation(data), LABELS)
    return issue.number


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
