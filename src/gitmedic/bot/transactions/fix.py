"""The fix: a transaction that carries a proposal for an incident, from its plan to the
merge a person may ask for.

**Its plan.** ``change_summary`` describes a proposal for the policy (strategy,
detectors, playbook, fields, files, kinds, namespaces, whether an image is new), the
policy decides, and the PR body renders the proposal with that decision. ``plan_of``
turns it into the transaction's Plan: a deterministic branch
``gitmedic/<incident>/attempt-<n>`` (a restart finds the same PR again) and the
fingerprints the change must clear. The controller reads the checkpoint (base SHA,
mu, baselines, what fires: :meth:`gitmedic.bot.controller.transact.Transactions.start`)
and hands it here.

**What it must clear.** The incident's findings, less those the app had before its fault.

A chart or base often carries a finding its team lives with (podinfo's chart
allows its one pod down on every rollout). It fires with every incident of the
app, so as a target it made the gate refuse, and verification revert, every fix:
no restore of a values key can clear a finding written in a template. A
finding the desired state has had all along (at the app's first commit, and
still just before the change the fix undoes: the parent of the commit that
bisect or the playbook found) is no target of this fix: the fix restores that
state, finding included. Both are asked so that, of two faults in two commits,
the earlier one's finding stays a target of a fix for the later one. It still counts
against the fix in the gate whenever the candidate worsens it (a new
fingerprint, or a higher severity, is a new finding there).

Only a proposal that names its introducing commit is judged so; an LLM
proposal, a fault with no history, or a desired state that does not load at
either revision keeps every finding as a target. Nor is a target dropped when that
would leave none: a fix with nothing to clear would pass the gate on no
evidence at all.

**A merge a person asked for.** ``/gitmedic merge``, carried out by the next tick:
what a person adds to a fix is the merge. The command approves the PR (the label the
machine's approval step reads) and, when its gate has passed, records an intent
(:func:`ask_merge`) and answers at once. The loop's next tick steps the PR's
transaction, whose approval step merges it through the machine (the head the gate
saw, main not moved) before the sync wait and the window; the tick then tells the
person on the PR what happened (:func:`carry_out_merges`). A bot PR no transaction
carries is merged by the tick itself, unless a person holds it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from gitmedic.bot.policy.decide import ChangeSummary, Decision, decide
from gitmedic.bot.render.changes import Reader, field_changes
from gitmedic.bot.render.pr_body import (
    IntroducingCommit,
    PrBodyInput,
    VerificationPlan,
    render_pr_body,
)
from gitmedic.bot.render.retry_note import retry_section
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.bot.transactions.intents import Intents, Item
from gitmedic.detectors.finding import Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.config import PolicyConfig
from gitmedic.reconciler.forge import Forge, PrState, StatusState
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.transaction import Plan, TxnState
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT, HOLD_LABEL
from gitmedic.reconciler.transaction.journal import Journal

log = logging.getLogger(__name__)
MERGE = "merge"


# -- its plan ----------------------------------------------------------------------


def change_summary(proposal: Proposal, incident: Incident) -> ChangeSummary:
    edits = proposal.edits
    set_fields = tuple(".".join(map(str, e.path)) for e in edits if e.op is not Op.REMOVE)
    removed = tuple(".".join(map(str, e.path)) for e in edits if e.op is Op.REMOVE)
    return ChangeSummary(
        strategy=proposal.strategy,
        detectors=tuple(sorted({f.detector for f in incident.findings})),
        playbooks=(proposal.playbook,) if proposal.playbook else (),
        fields=set_fields,
        removed_fields=removed,
        files=tuple(sorted({e.file for e in edits})),
        changed_lines=len(edits),
        namespaces=tuple(sorted({e.resource.namespace for e in edits})),
        kinds=tuple(sorted({e.resource.kind for e in edits})),
        deletes_object=any(e.op is Op.REMOVE_OBJECT for e in edits),
        llm_authored=proposal.strategy == "llm",
        alternatives=len(proposal.alternatives),
    )


def decision_for(
    proposal: Proposal, incident: Incident, policy: PolicyConfig, now: float
) -> Decision:
    summary = change_summary(proposal, incident)
    return decide(summary, policy, datetime.fromtimestamp(now, tz=UTC))


def plan_of(
    proposal: Proposal,
    incident: Incident,
    *,
    attempt: int,
    base_sha: str,
    mu_pre: float,
    decision: Decision,
    body: str,
    feedback: Sequence[str],
    baselines: Mapping[str, Mapping[str, int] | None] | None = None,
    firing: frozenset[str] = frozenset(),
    revert_auto_merge: bool = True,
    preexisting: frozenset[str] = frozenset(),
) -> Plan:
    """``preexisting``: fingerprints of findings the app had before its fault
    (:func:`~preexisting`), which are no targets of the fix."""
    return Plan(
        txn_id=f"{incident.id}/attempt-{attempt}",
        app=incident.app,
        incident=incident.id,
        attempt=attempt,
        strategy=proposal.strategy,
        branch=f"gitmedic/{incident.id}/attempt-{attempt}",
        title=title_of(proposal, incident),
        edits=tuple(e.to_json() for e in proposal.edits),
        base_sha=base_sha,
        mu_pre=mu_pre,
        targets=fix_targets(incident, preexisting),
        auto_merge=decision.auto_merge,
        body=body,
        feedback=tuple(feedback),
        tokens=proposal.tokens,
        baselines=dict(baselines or {}),
        firing=tuple(sorted(firing)),
        playbook=proposal.playbook or "",
        proposal=proposal.to_json(),
        revert_auto_merge=revert_auto_merge,
    )


def title_of(proposal: Proposal, incident: Incident) -> str:
    first = (incident.active or incident.findings)[0]
    objects = sorted({str(e.resource) for e in proposal.edits})
    where = objects[0] if len(objects) == 1 else f"{len(objects)} objects"
    return f"fix({incident.app}): {first.detector} on {where}"


def pr_body(
    proposal: Proposal,
    incident: Incident,
    decision: Decision,
    plan: VerificationPlan,
    read: Reader = lambda file: None,
    follows: TxnState | None = None,
) -> str:
    """``read``: a file at the PR's base (:func:`base_reader`), the "before" of the table;
    ``follows``: the undone attempt a retry follows, linked with what was found on it."""
    commit = proposal.commit
    data = PrBodyInput(
        incident=incident.id,
        app=incident.app,
        summary=proposal.diagnosis.splitlines()[0] if proposal.diagnosis else incident.id,
        findings=incident.active or incident.findings,
        diagnosis=proposal.diagnosis,
        strategy=proposal.strategy,
        decision=decision,
        plan=plan,
        fields=field_changes(proposal.edits, read),
        follows=retry_section(follows) if follows is not None else "",
        playbook=proposal.playbook,
        commit=IntroducingCommit(commit.sha, commit.author, commit.subject) if commit else None,
        tokens=proposal.tokens,
        changes=tuple(e.describe() for e in proposal.edits),
    )
    return render_pr_body(data).text


# -- what it must clear ------------------------------------------------------------


def fix_targets(incident: Incident, preexisting: frozenset[str]) -> tuple[str, ...]:
    """Fingerprints the fix must clear: the incident's active findings above info, less
    the ones present before its fault (unless that leaves none)."""
    every = tuple(f.fingerprint for f in incident.active if f.severity is not Severity.INFO)
    caused = tuple(fp for fp in every if fp not in preexisting)
    return caused or every


def preexisting(
    repo: Path,
    app_path: str,
    namespace: str,
    detectors: Sequence[Detector],
    proposal: Proposal,
    deployer: str = "",
) -> frozenset[str]:
    """Fingerprints of the desired state's findings both just before the proposal's
    introducing commit and at the app's first commit: what the app has had all along."""
    if proposal.commit is None:
        return frozenset()
    sha = proposal.commit.sha
    before = _rev(repo, "rev-parse", "--verify", "--quiet", f"{sha}^")
    first = _rev(repo, "log", "--reverse", "--format=%H", sha, "--", app_path or ".")
    if not before or not first:
        return frozenset()  # the first commit: nothing came before it
    app = (repo, app_path, namespace, deployer)
    return _findings(app, detectors, before) & _findings(app, detectors, first.split()[0])


def _rev(repo: Path, *args: str) -> str:
    found = gitcmd.run(repo, *args)
    return found.stdout.strip() if found.returncode == 0 else ""


def _findings(
    app: tuple[Path, str, str, str], detectors: Sequence[Detector], rev: str
) -> frozenset[str]:
    repo, app_path, namespace, deployer = app
    where = repo / app_path if app_path else repo
    state = load_desired(where, rev=rev, namespace=namespace, deployer=deployer)
    if state.errors:
        return frozenset()  # what did not load cannot vouch for anything
    return frozenset(f.fingerprint for f in run_detectors(detectors, state.snapshot).findings)


# -- a merge a person asked for --------------------------------------------------


def ask_merge(intents: Intents, pr: int, now: float) -> bool:
    """Record the merge of ``pr`` for the next tick (False: already asked)."""
    return intents.add(MERGE, str(pr), {"pr": pr}, now)


def txn_of(journal: Journal, app: str, pr: int) -> TxnState | None:
    """The latest transaction of ``app`` whose PR (or revert PR) is ``pr``."""
    found = [t for t in journal.transactions(app=app) if pr in (t.pr, t.revert_pr)]
    return found[-1] if found else None


def carry_out_merges(
    intents: Intents, asked: list[Item], journal: Journal, forge: Forge, app: str
) -> None:
    """The tick's share, after its steps: each asked merge told on its PR, then done
    (``asked``: the tick's one read of the open intents, its merges)."""
    for item in asked:
        pr = int(item.key)
        state = txn_of(journal, app, pr)
        text = _untracked(forge, pr) if state is None else _carried(state, pr)
        forge.ensure_comment(pr, MERGE, text)
        log.info("merge of #%s: %s", pr, text)
        intents.finish(MERGE, item.key, text)


def _carried(state: TxnState, pr: int) -> str:
    sha = state.merge_sha if state.pr == pr else state.revert_merge_sha
    if sha:
        return f"Merged #{pr} as `{sha[:12]}`; gitmedic now waits for the sync and verifies it."
    return f"Approved #{pr}; it is {state.phase.value}: {state.reason or 'in progress'}."


def _untracked(forge: Forge, pr: int) -> str:
    """A bot PR with no transaction (one from before transactions): merged here."""
    found = forge.get_pr(pr)
    if found.state is PrState.MERGED:
        return f"#{pr} is merged (`{(found.merge_sha or '')[:12]}`)."
    if found.state is not PrState.OPEN:
        return f"#{pr} is {found.state.value}: not merged."
    if HOLD_LABEL in found.labels:
        return f"#{pr} is held; `/gitmedic unhold` it first."
    gate = {s.context: s.state for s in forge.get_statuses(found.head_sha)}
    if gate.get(GATE_CONTEXT) is not StatusState.SUCCESS:
        return f"Approved #{pr}: it merges once its {GATE_CONTEXT} check passes."
    return f"Merged #{pr} as `{forge.merge(pr, found.head_sha)[:12]}`."
