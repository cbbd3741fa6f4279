"""After an incident: memory for a committed fix, an issue for an escalation.

Memory: reflection (:func:`~gitmedic.bot.memory.reflection.reflect`) gets the
incident, the fix and the desired states before and after it; its files (the
outcome record, and a learned detector and playbook when one validated) are
committed on ``gitmedic/<incident>/memory`` and opened as a pull request. The
guard (``check_memory``) runs on a throw-away worktree of that branch; when it
passes, the PR is low risk by construction (only ``.gitmedic/`` changes, all of
it validated) and is merged; otherwise it is left open for a person, labelled.

Escalation: a runtime-only fault has no fix in Git, so it gets an issue (one per
incident, idempotent) with the diagnosis and the evidence, and no pull request.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.outcomes import OutcomeRecord
from gitmedic.bot.memory.reflection import ReflectionInput, reflect
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.transaction import TxnState

if TYPE_CHECKING:
    from gitmedic.bot.loop.loop import LoopConfig

MEMORY_LABELS = ("gitmedic", "gitmedic:memory")


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
) -> int | None:
    """Reflect, open the memory PR and merge it when the guard passes; its number.

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
    main = forge.default_branch()
    base = _git(config.repo, "rev-parse", main)
    head = forge.commit_files(change.branch, base, dict(change.files), change.title)
    pr = forge.ensure_pr(change.branch, main, change.title, change.body, MEMORY_LABELS)
    if _guard_passes(config.repo, head, base):
        forge.merge(pr.number, head)
    else:
        forge.add_labels(pr.number, ["gitmedic:hold"])
    return pr.number


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


def _guard_passes(repo: Path, head: str, base: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="gitmedic-guard-") as tmp:
        tree = Path(tmp) / "tree"
        _git(repo, "worktree", "add", "-q", "--detach", str(tree), head)
        try:
            return not check_memory(tree, base_rev=base)
        finally:
            _git(repo, "worktree", "remove", "--force", str(tree))


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


def _git(repo: Path, *args: str) -> str:
    return gitcmd.output(repo, args[0], *args[1:])
