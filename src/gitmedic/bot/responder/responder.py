"""The responder: one proposal per incident, strategies cheapest first.

First, a runtime lever (:mod:`.levers`) for each live-only finding whose
evidence fits one (an OOM kill no recent change explains: raise the limit; pods
wedged with no config change: a restart annotation), so a harmless recent
commit is not reverted for a runtime fault; a lever declines wherever a recent
change may be the cause. Then, for each finding not covered yet
(desired-state findings first, worst first):

1. a routed playbook with a fix recipe restores its fields from history (zero
   tokens);
2. regression bisect: the commit that introduced a desired-state finding, and the
   smallest set of its changes whose undo clears the finding; for a live-only
   finding, the latest recent change to the implicated container, else the
   restore of a quiet desired-state finding its evidence names (:mod:`.corroborated`:
   an alert on a caller whose address names a host no Service has);
3. a ``runtime_only`` playbook routed by what is left decides escalation at once
   (zero tokens) when it is learned (the repo's own verdict on this fault class)
   or when no recent commit changed the app at all: nothing in Git can be the
   cause, so the model is not asked. A generic built-in runtime hypothesis never
   pre-empts a desired-state cause: with a recent change it waits for step 4;
4. what is left goes, together, to the LLM when one is configured;
5. what is still left is escalated (B-class): with no edits at all the proposal
   is an escalation with the evidence and never becomes a fix PR.

Every restore is narrowed before it is accepted: it never removes or changes an
item (an env var, a volume, a key) that no finding implicates, even when the
commit that introduced the fault brought it (:mod:`.implicated`).

A finding the fixes already accepted have cleared (re-parsed desired state), or
whose object they already edit (a live symptom of the same fault), is covered
and costs nothing more. The proposal is named by the costliest strategy used.

:meth:`Responder.extend` is the retry after a candidate was deployed, cleared
what it targeted but caused new findings (then reverted): a fault often has two
halves (a release's new image *and* the entrypoint it needs), and restoring one
uncovers the other. The retry keeps the undone candidate's edits and answers
the findings it caused with the same strategies, on top of those edits, or,
when none explains them, with the rest of the candidate's introducing commit on
what the oracles implicate (:mod:`.uncovered`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gitmedic.bot.responder.bisect import bisect_fix, find_introduction
from gitmedic.bot.responder.corroborated import corroborated_fix
from gitmedic.bot.responder.implicated import implicated_only
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.levers import LEVER_PLAYBOOKS, Evidence, SeenHealthy, lever_fix
from gitmedic.bot.responder.levers.node import not_ready_evidence
from gitmedic.bot.responder.live_blame import recent_regression
from gitmedic.bot.responder.llm import Completion
from gitmedic.bot.responder.llm_strategy import LlmOutcome, llm_fix, model_of
from gitmedic.bot.responder.playbooks import Playbook, builtin_playbooks, repo_playbooks, route
from gitmedic.bot.responder.proposal import (
    STRATEGY_COST,
    Escalation,
    IntroducingCommit,
    Proposal,
    evidence_of,
)
from gitmedic.bot.responder.states import DesiredStates
from gitmedic.bot.responder.strategies import Limits, playbook_fix, runtime_only
from gitmedic.bot.responder.uncovered import uncovered_fix
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.registry import Registry
from gitmedic.reconciler.config import LlmConfig
from gitmedic.reconciler.manifests.documents import EditError
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.paths import format_path
from gitmedic.reconciler.manifests.rendered import not_editable
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.redact import redact_text


@dataclass(frozen=True)
class _Plan:
    fixes: tuple[Fix, ...]
    escalated: tuple[tuple[Finding, str], ...]
    unresolved: tuple[Finding, ...]


# Live objects the repo does not declare but desired-state detectors judge by.
CONTEXT_KINDS = frozenset({"Node"})


class Responder:
    def __init__(
        self,
        repo: ManifestRepo,
        *,
        detectors: Registry | None = None,
        playbooks: Sequence[Playbook] | None = None,
        llm: LlmConfig | None = None,
        completion: Completion | None = None,
        limits: Limits | None = None,
        healthy: Sequence[SeenHealthy] = (),
    ) -> None:
        self.repo = repo
        self.healthy = tuple(healthy)  # images the monitor saw run healthy (image rollback)
        self.detectors = detectors or builtin_registry()
        self.playbooks = list(playbooks) if playbooks is not None else _all_playbooks(repo)
        self.llm = llm
        self.completion = completion
        self.limits = limits or Limits()

    def propose(self, incident: Incident) -> Proposal:
        context = [o for o in incident.live or () if o.kind in CONTEXT_KINDS]
        states = DesiredStates(self.repo, self.detectors, context)
        ws = Workspace(self.repo, states, self.repo.git.rev_parse("HEAD"))
        findings = self._ordered(ws, incident.active or incident.findings)
        plan = self._deterministic(ws, findings, incident)
        llm: LlmOutcome | None = None
        if plan.unresolved and model_of(self.llm):
            llm = llm_fix(
                ws,
                plan.unresolved,
                config=self.llm or LlmConfig(),
                playbooks=self.playbooks,
                live=incident.live,
                completion=self.completion,
            )
            if llm.fix is not None:
                ws.accept(llm.fix)
                plan = _Plan((*plan.fixes, llm.fix), plan.escalated, ())
        left = tuple(
            (f, self._with_live(ws, f, incident, self._unexplained(ws, f))) for f in plan.unresolved
        )
        return _proposal(incident, _Plan(plan.fixes, (*plan.escalated, *left), ()), llm)

    def extend(
        self,
        incident: Incident,
        undone: Proposal,
        caused: Sequence[Finding],
        feedback: Sequence[str] = (),
    ) -> Proposal | None:
        """``undone``'s edits plus deterministic fixes for what they caused, or None.

        When no strategy explains what they caused, the rest of the undone candidate's
        introducing commit on what the oracles implicate (the caused findings' objects,
        what ``feedback`` names) is restored instead (:mod:`.uncovered`). None when the
        undone edits no longer apply (main moved) or neither explains it: the caller
        then proposes afresh.
        """
        states = DesiredStates(self.repo, self.detectors, ())
        ws = Workspace(self.repo, states, self.repo.git.rev_parse("HEAD"))
        try:
            contents = ws.applied(undone.edits, {})
        except EditError:
            return None
        ws.accept(Fix(undone.strategy, undone.edits, contents, undone.diagnosis, undone.playbook))
        plan = self._deterministic(ws, self._ordered(ws, caused), incident)
        if not plan.fixes or plan.unresolved or plan.escalated:
            rest = uncovered_fix(ws, undone, caused, feedback)
            if rest is None:
                return None
            plan = _Plan((rest,), (), ())
        base = Fix(undone.strategy, undone.edits, contents, _kept(undone, caused), undone.playbook)
        merged = _proposal(incident, _Plan((base, *plan.fixes), (), ()), None)
        return replace(
            merged,
            commit=undone.commit or merged.commit,
            playbook=undone.playbook or merged.playbook,
        )

    def _ordered(self, ws: Workspace, findings: Sequence[Finding]) -> list[Finding]:
        def rank(f: Finding) -> tuple[bool, bool, int, tuple[str, ...]]:
            # The repo's own memory first: a learned playbook is its verdict on this class.
            learned = any(
                b.fix and b.source.startswith(".gitmedic/") for b in route(self.playbooks, f)
            )
            seen = ws.states.judges(f) and ws.states.visible(f, ws.head)
            return (not learned, not seen, -f.severity.rank, f.sort_key)

        return sorted(findings, key=rank)

    def _deterministic(
        self, ws: Workspace, findings: Sequence[Finding], incident: Incident
    ) -> _Plan:
        """Runtime levers for the live-only findings whose evidence fits one, then the
        restores for the rest, finding by finding: a lever that explains one finding of a
        fault keeps a harmless recent commit from being reverted for another finding of
        it. A lever declines wherever a recent change may be the cause, so it never
        pre-empts a restore of that change."""
        since = incident.opened_at - self.limits.recent_s
        fixes: list[Fix] = []
        for finding in findings:
            if fixes and self._covered(ws, finding):
                continue
            fix = self._lever(ws, finding, incident, since)
            if fix is not None:
                ws.accept(fix)
                fixes.append(_with_findings(fix, finding))
        escalated: list[tuple[Finding, str]] = []
        unresolved: list[Finding] = []
        for finding in findings:
            if fixes and self._covered(ws, finding):
                continue
            fix = self._cheapest(ws, finding, since)
            if fix is not None:
                ws.accept(fix)
                fixes.append(_with_findings(fix, finding))
                continue
            verdict = self._runtime_verdict(ws, finding, since)
            if verdict is not None:
                escalated.append((finding, self._with_live(ws, finding, incident, verdict)))
            else:
                unresolved.append(finding)
        return _Plan(tuple(fixes), tuple(escalated), tuple(unresolved))

    def _covered(self, ws: Workspace, finding: Finding) -> bool:
        if ws.states.judges(finding) and ws.states.visible(finding, ws.head):
            return not ws.present(finding)
        return bool({finding.resource, *finding.related} & ws.edited)

    def _cheapest(self, ws: Workspace, finding: Finding, since: float) -> Fix | None:
        """The cheapest restore, narrowed to what the finding implicates (:mod:`.implicated`)."""
        fix = playbook_fix(ws, finding, self.playbooks, since, self.limits)
        fix = implicated_only(ws, finding, fix) if fix is not None else None
        if fix is not None:
            return fix
        if _desired(ws, finding):
            intro = find_introduction(ws.states, finding, self.limits.max_commits)
            fix = bisect_fix(ws, finding, intro) if intro is not None else None
        else:
            fix = recent_regression(ws, finding, since, self.limits.max_commits)
            if fix is None:
                return self._corroborated(ws, finding)
        return implicated_only(ws, finding, fix) if fix is not None else None

    def _corroborated(self, ws: Workspace, finding: Finding) -> Fix | None:
        """A live finding no recent change explains, whose evidence names what a quiet
        desired-state finding names: that finding's restore (:mod:`.corroborated`),
        narrowed to what it implicates."""
        found = corroborated_fix(ws, finding, self.limits.max_commits)
        if found is None:
            return None
        fix, cause = found
        return implicated_only(ws, cause, fix)

    def _lever(
        self, ws: Workspace, finding: Finding, incident: Incident, since: float
    ) -> Fix | None:
        """A runtime lever (:mod:`.levers`) for a finding only the live state shows."""
        if _desired(ws, finding):
            return None
        at = incident.opened_at
        evidence = Evidence(ws, finding, incident.live, since, at, self.limits.levers, self.healthy)
        return lever_fix(evidence, {p.id for p in self.playbooks})

    def _with_live(self, ws: Workspace, finding: Finding, incident: Incident, why: str) -> str:
        """``why``, led by what the live state shows of a runtime cause (a NotReady node)."""
        at = incident.opened_at
        evidence = Evidence(ws, finding, incident.live, at - self.limits.recent_s, at)
        seen = not_ready_evidence(evidence)
        return f"{seen}; {why}" if seen else why

    def _runtime_verdict(self, ws: Workspace, finding: Finding, since: float) -> str | None:
        """Why a runtime-only playbook decides escalation now, or None to keep looking."""
        books = runtime_only(self.playbooks, finding)
        learned = [b for b in books if b.source.startswith(".gitmedic/")]
        if learned:
            return _runtime_reason(learned)
        # A lever's playbook is a hypothesis its lever tests on the evidence: the lever
        # declined, so it shows no runtime cause and must not keep the model from a fault
        # Git carries since long ago (an image tag never pushed, committed a month back).
        books = [b for b in books if b.id not in LEVER_PLAYBOOKS]
        if books and not _changed_recently(ws, since, self.limits.max_commits):
            return f"no recent change to the app; {_runtime_reason(books)}"
        return None

    def _unexplained(self, ws: Workspace, finding: Finding) -> str:
        books = runtime_only(self.playbooks, finding)
        ref = finding.resource
        obj = ws.states.at(ws.head).get(ref.kind, ref.namespace, ref.name)
        # a rendered field no file sets (a template, a kustomize transformer): say where
        why = not_editable(self.repo, obj, finding.params) or "no desired-state cause found"
        return f"{why}; runtime-only candidates: {_runtime_reason(books)}" if books else why


def _desired(ws: Workspace, finding: Finding) -> bool:
    """Does the desired state at HEAD show the finding (so a commit can be proven)?"""
    return ws.states.judges(finding) and ws.states.visible(finding, ws.head)


def _changed_recently(ws: Workspace, since: float, limit: int) -> bool:
    """Whether a commit since ``since`` changed the app (its first import does not count)."""
    for commit in ws.states.commits(limit):
        if commit.timestamp < since:
            return False
        if commit.parents and ws.states.has_app(commit.parents[0]):
            return True
    return False


def _kept(undone: Proposal, caused: Sequence[Finding]) -> str:
    """The retry's diagnosis opens with why it extends the undone candidate (the PR summary)."""
    seen = "; ".join(f"{f.detector} on {f.resource}" for f in caused)
    return (
        f"The previous candidate cleared its targets but, once deployed, caused {seen}: "
        f"its change is kept and what it uncovered is fixed with it.\n{undone.diagnosis}"
    )


def _runtime_reason(books: Sequence[Playbook]) -> str:
    return ", ".join(f"playbook {b.id} is runtime-only" for b in books)


def _all_playbooks(repo: ManifestRepo) -> list[Playbook]:
    return [*repo_playbooks(repo.root), *builtin_playbooks()]


def _with_findings(fix: Fix, finding: Finding) -> Fix:
    return replace(fix, findings=(*fix.findings, finding))


def _proposal(incident: Incident, plan: _Plan, llm: LlmOutcome | None) -> Proposal:
    evidence = evidence_of(incident.active or incident.findings)
    tokens = llm.tokens if llm else 0
    cost = llm.cost_usd if llm else 0.0
    rejected = llm.rejected if llm else ()
    if not plan.fixes:
        reasons = [f"{_seen(f)}: {why}; no runtime lever applies" for f, why in plan.escalated]
        if llm is not None:
            reasons.append(f"the model proposed no valid edit: {llm.diagnosis}")
        reason = redact_text("; ".join(reasons) or "nothing to fix")
        return Proposal(
            incident.id,
            "escalate",
            diagnosis=reason,
            evidence=evidence,
            escalation=Escalation(reason, evidence),
            tokens=tokens,
            cost_usd=cost,
            rejected=rejected,
        )
    lines = [f.diagnosis for f in plan.fixes]
    lines += [f"Escalated: {f.detector} on {f.resource} ({why})." for f, why in plan.escalated]
    commit = next((f.commit for f in plan.fixes if f.commit is not None), None)
    edits = tuple(e for f in plan.fixes for e in f.edits)
    return Proposal(
        incident=incident.id,
        strategy=max((f.strategy for f in plan.fixes), key=lambda s: STRATEGY_COST[s]),
        edits=edits,
        diagnosis=redact_text("\n".join(lines)),
        evidence=evidence,
        playbook=next((f.playbook for f in plan.fixes if f.playbook), None),
        commit=IntroducingCommit.of(commit) if commit else None,
        fields=tuple(_field(e) for e in edits),
        tokens=tokens,
        cost_usd=cost,
        rejected=rejected,
        commits_walked=sum(f.walked for f in plan.fixes),
        alternatives=tuple(a for f in plan.fixes for a in f.alternatives),
    )


def _seen(finding: Finding) -> str:
    """The finding and what it saw (the oracles' first failure on the way names the cause)."""
    seen = f" ({finding.evidence[:300]})" if finding.evidence else ""
    return f"{finding.detector} on {finding.resource}{seen}"


def _field(edit: Edit) -> str:
    where = format_path(edit.path) if edit.path else "(whole object)"
    return f"{edit.file}: {edit.resource} {where}"
