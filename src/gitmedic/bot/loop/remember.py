"""After an incident: memory for a committed fix, an issue for an escalation.

Memory: reflection (:func:`~gitmedic.bot.memory.reflection.reflect`) gets the
incident, the fix and the desired states before and after it; its files (the
outcome record, and a learned detector and playbook when one validated) are
committed on ``gitmedic/<incident>/memory`` and opened as a pull request,
gated by the memory guard and merged only as the policy allows, like a fix
(:mod:`gitmedic.bot.memory_pr`).

Escalation: a runtime-only fault has no fix in Git, so it gets an issue (one per
incident, idempotent) with the diagnosis and the evidence, and no pull request.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from gitmedic.bot.memory.outcomes import OutcomeRecord
from gitmedic.bot.memory.reflection import ReflectionInput, reflect
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.bot.memory_pr import MemoryFiles, MemoryPr, open_memory_pr
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.transaction import TxnState

if TYPE_CHECKING:
    from gitmedic.bot.loop.loop import LoopConfig


def remember(
    config: LoopConfig,
    forge: Forge,
    incident: Incident,
    proposal: Proposal,
    state: TxnState,
    now: float,
    *,
    undone: tuple[Edit, ...] = (),
    caused: tuple[Finding, ...] = (),
    live_after: Snapshot | None = None,
) -> MemoryPr | None:
    """Reflect, open the memory PR, gate it and merge it when the policy allows (or None).

    ``undone``: the edits of the candidates deployed and reverted before this one, with what
    they ``caused``; with the live snapshots (the incident's, and ``live_after``
    the fix) reflection can learn the lesson of the undone attempts.
    """
    where = config.repo / config.path if config.path else config.repo
    before = load_desired(where, rev=state.plan.base_sha, namespace=config.namespace).snapshot
    after = load_desired(where, rev=state.merge_sha, namespace=config.namespace).snapshot
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
    change = reflect(config.repo, inp)
    if not change.files:
        return None
    memory = MemoryFiles(incident.id, change.branch, change.title, change.body, change.files)
    return open_memory_pr(forge, config.repo, memory, config.policy, now)


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
        closed_at=_iso(now),
        playbooks_applied=(proposal.playbook,) if proposal.playbook else (),
        app=app,
    )


def report_escalation(forge: Forge, incident: Incident, proposal: Proposal) -> int:
    evidence = json.dumps([dict(e) for e in proposal.evidence], indent=1, sort_keys=True)
    reason = proposal.escalation.reason if proposal.escalation else proposal.diagnosis
    body = (
        f"gitmedic found a fault in **{incident.app}** that no change to the manifests "
        f"explains, so it opened no pull request.\n\n**Why:** {reason}\n\n"
        f"**Evidence:**\n\n```json\n{evidence}\n```\n\nA person needs to look at the "
        "runtime (credentials, data, the network, the nodes)."
    )
    issue = forge.ensure_issue(f"gitmedic: {incident.id} needs a person", body, ("gitmedic",))
    return issue.number


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
