"""The body of a gitmedic pull request: one fixed anatomy, pinned by golden files.

Summary, findings (table with evidence), diagnosis, the change (strategy, and the
playbook or the commit that introduced the fault), risk and the policy decision
with its reason, the non-regression plan (what is checked, for how long, what
happens on failure, attempt n of N), and the controls: checkboxes carrying a
hidden ``<!-- gitmedic:control NAME -->`` marker, so a person ticking one is read
back by :func:`checked_controls` whatever the wording around it.

The renderer returns the human part and the state dict; the forge adds the hidden
state marker and the body hash (:func:`gitmedic.reconciler.forge_markers.render_body`).
Every text that comes from findings, the diagnosis or a commit goes through
:func:`~gitmedic.reconciler.redact.redact_text` (only masked values are ever
rendered) and cannot open an HTML comment, so it can neither leak a secret nor
forge a control or state marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gitmedic.bot.policy.decide import Decision
from gitmedic.bot.render.changes import FieldChange, changes_table
from gitmedic.bot.render.templates import cell, fill, prose
from gitmedic.bot.render.untrusted import untrusted
from gitmedic.detectors.finding import Finding, sort_findings
from gitmedic.reconciler.forge import JsonObject
from gitmedic.reconciler.redact import redact_text

CONTROLS: tuple[tuple[str, str], ...] = (
    ("retry", "Retry with a new attempt"),
    ("hold", "Hold: do not merge this PR automatically"),
)
_CONTROL = re.compile(r"^\s*[-*] \[(?P<mark>[ xX])\] <!-- gitmedic:control (?P<name>[a-z-]+) -->")


@dataclass(frozen=True)
class IntroducingCommit:
    sha: str
    author: str
    subject: str


@dataclass(frozen=True)
class VerificationPlan:
    """What the transaction checks after the merge, and what it does on failure."""

    engine: str  # e.g. "Argo CD", "Flux", "the simulator"
    sync_timeout_s: float
    oracles: tuple[str, ...]
    window_s: float
    attempt: int
    max_attempts: int
    revert_at_once: bool = True  # policy.revert_regressions: auto


@dataclass(frozen=True)
class PrBodyInput:
    incident: str
    app: str
    summary: str
    findings: tuple[Finding, ...]
    diagnosis: str
    strategy: str  # playbook | bisect | llm | revert
    decision: Decision
    plan: VerificationPlan
    fields: tuple[FieldChange, ...] = ()  # the changed-fields table (render.changes)
    follows: str = ""  # a retry: the undone attempt it follows (render.retry_note)
    txn_id: str = ""
    playbook: str | None = None
    commit: IntroducingCommit | None = None
    tokens: int = 0
    changes: tuple[str, ...] = ()  # every edit, described (Edit.describe): all named in risk


@dataclass(frozen=True)
class RenderedBody:
    text: str  # the human part; the forge adds the hidden markers
    state: JsonObject


def render_pr_body(data: PrBodyInput) -> RenderedBody:
    text = fill(
        "pr_body.md",
        summary=untrusted(redact_text(data.summary.strip())),
        findings=findings_table(data.findings),
        diagnosis=untrusted(redact_text(data.diagnosis.strip())) or "_No diagnosis recorded._",
        change=_change(data),
        risk=_risk(data.decision, data.changes),
        plan=_plan(data.plan),
        controls=render_controls(),
        fields=changes_table(data.fields),
        follows=data.follows,
        footer=f"gitmedic · incident {data.incident} · app {data.app}",
    )
    return RenderedBody(text, _state(data))


def findings_table(findings: Iterable[Finding]) -> str:
    rows = [
        "| {} | {} | {} | {} | {} |".format(
            f.severity.value,
            cell(f"`{f.detector}` / {f.rule}"),
            cell(f"`{f.resource}`"),
            cell(redact_text(f.summary)),
            cell(redact_text(f.evidence)),
        )
        for f in sort_findings(list(findings))
    ]
    return "\n".join(rows) or "| - | - | - | no findings | - |"


def render_controls(checked: Iterable[str] = ()) -> str:
    ticked = set(checked)
    return "\n".join(
        f"- [{'x' if name in ticked else ' '}] <!-- gitmedic:control {name} --> {label}"
        for name, label in CONTROLS
    )


def checked_controls(body: str) -> frozenset[str]:
    """The controls ticked in a PR body as a person edited it (known names only)."""
    known = {name for name, _ in CONTROLS}
    return frozenset(
        m["name"]
        for m in map(_CONTROL.match, body.splitlines())
        if m is not None and m["mark"] in "xX" and m["name"] in known
    )


def newly_checked(before: str, after: str) -> frozenset[str]:
    """Controls ticked in ``after`` that were not ticked in ``before`` (an edit's effect)."""
    return checked_controls(after) - checked_controls(before)


def _change(data: PrBodyInput) -> str:
    lines = [f"**Strategy:** {data.strategy}"]
    if data.playbook:
        lines.append(f"**Playbook:** `{data.playbook}`")
    if data.commit is not None:
        c = data.commit
        subject = prose(redact_text(c.subject)).replace("`", "'")
        lines.append(f"**Introduced by:** `{c.sha[:12]}` by {untrusted(c.author)}: `{subject}`")
    if data.strategy == "llm":
        lines.append(f"**LLM tokens spent:** {data.tokens}")
    return "  \n".join(lines)


def _risk(decision: Decision, changes: tuple[str, ...] = ()) -> str:
    verdict = (
        "merge automatically once the gate passes"
        if decision.auto_merge
        else "hold for a human: `/gitmedic approve` or an approving review"
    )
    # A rule's name is the policy author's text: a backtick in it must not end the code span.
    name = _in_code(decision.matched_rule or "")
    rule = f"`{name}`" if name else "none (default)"
    return (
        f"**Risk:** {decision.risk}  \n**Decision:** {verdict}  \n"
        f"**Rule:** {rule}  \n**Why:** {untrusted(decision.reason)}"
    ) + _every_change(changes)


def _every_change(changes: tuple[str, ...]) -> str:
    """Each field the PR changes, so the risk a reviewer weighs is never a part of it."""
    if not changes:
        return ""
    lines = "\n".join(f"- `{_in_code(redact_text(c))}`" for c in changes)
    return f"\n\n**Every change this PR makes ({len(changes)}):**\n\n{lines}"


def _in_code(text: str) -> str:
    """``text`` that cannot end the code span it is shown in."""
    return text.replace("`", "'")


def _plan(plan: VerificationPlan) -> str:
    oracles = "\n".join(f"- {untrusted(o)}" for o in plan.oracles) or "- the detectors only"
    last = plan.attempt >= plan.max_attempts
    after = (
        "this is the last attempt, so the incident is then escalated to a human"
        if last
        else "then gitmedic retries with what the oracles saw"
    )
    merged = (
        "merged at once"
        if plan.revert_at_once
        else "merged once a person approves it (`/gitmedic approve` on the revert PR)"
    )
    return (
        f"After the merge, {plan.engine} must report this merge commit synced and healthy "
        f"within {plan.sync_timeout_s:g}s. Then these oracles are watched for "
        f"{plan.window_s:g}s:\n\n{oracles}\n\n"
        "The change is kept only if the app is no worse than before and the findings "
        "above are gone.\n\n"
        f"**On failure:** a revert PR is opened and {merged}; {after}.  \n"
        f"**Attempt:** {plan.attempt} of {plan.max_attempts}"
    )


def _state(data: PrBodyInput) -> JsonObject:
    state: JsonObject = {
        "incident": data.incident,
        "app": data.app,
        "attempt": data.plan.attempt,
        "max_attempts": data.plan.max_attempts,
        "strategy": data.strategy,
        "risk": data.decision.risk,
        "auto_merge": data.decision.auto_merge,
        "targets": [f.fingerprint for f in sort_findings(list(data.findings))],
    }
    if data.txn_id:
        state["txn"] = data.txn_id
    if data.playbook:
        state["playbook"] = data.playbook
    if data.commit is not None:
        state["introduced_by"] = data.commit.sha
    return state
