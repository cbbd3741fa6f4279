"""The body of an escalation issue: readable sections, evidence folded, the whole capped.

A person opening "gitmedic: <incident> needs a person" reads, in order: what
happened, what gitmedic tried (each attempt with its PR, outcome, mu and why it
was undone), what they should do, then the evidence: the findings as a short
table, the diagnosis and the findings' JSON each in a collapsed ``<details>``
block. Cluster and model text is escaped (:mod:`.untrusted`) or fenced.

GitHub refuses an issue body over 65,536 characters, and one app's evidence
reached 38,250; a fault with hundreds of findings would be refused, and the
person never told. So the body is built to fit :data:`MAX_BODY` (with room for
the forge's hidden markers): the JSON block keeps as many findings as fit and
says how many it left out, then the diagnosis is shortened; the sections above
the evidence are never cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.render.evidence import cell, details, finding_table, line
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.untrusted import untrusted
from gitmedic.reconciler.redact import redact_text
from gitmedic.reconciler.transaction import TxnState

MAX_BODY = 60_000  # GitHub's limit is 65,536: the rest is for the forge's hidden markers
TABLE_ROWS = 20  # findings in the table; all of them (as many as fit) in the JSON block


@dataclass(frozen=True)
class Attempt:
    """One attempt gitmedic made, as the issue lists it."""

    number: int
    pr: int | None
    strategy: str
    outcome: str
    mu_before: float
    mu_after: float | None
    reason: str
    revert_pr: int | None = None


def attempt_of(state: TxnState) -> Attempt:
    return Attempt(
        state.plan.attempt,
        state.pr,
        state.plan.strategy,
        state.outcome.value,
        state.plan.mu_pre,
        state.mu_post,
        state.reason,
        state.revert_pr,
    )


@dataclass(frozen=True)
class EscalationInput:
    app: str
    incident: str
    happened: str  # gitmedic's own sentence (trusted markdown)
    todo: str  # what a person should do (trusted markdown)
    reason: str  # why gitmedic stopped (may quote cluster or model text: escaped)
    diagnosis: str = ""  # the last diagnosis (model or detector text: folded, fenced)
    attempts: tuple[Attempt, ...] = ()
    findings: tuple[Mapping[str, Any], ...] = ()  # the evidence, as findings' JSON


def render_escalation(data: EscalationInput, limit: int = MAX_BODY) -> str:
    head = _head(data)
    diagnosis = redact_text(data.diagnosis.strip())
    items = list(data.findings)
    keep = len(items)
    while True:
        body = head + _evidence(data, diagnosis, items, keep)
        if len(body) <= limit:
            return body
        if keep > 0:  # fewer findings in the JSON block first
            keep //= 2
            continue
        if len(diagnosis) > 200:
            diagnosis = diagnosis[: len(diagnosis) // 2] + "\n… (shortened: see the PRs)"
            continue
        return body[: limit - 40] + "\n\n_(cut to fit the forge's limit)_"


def _head(data: EscalationInput) -> str:
    parts = [
        "## What happened",
        data.happened,
        f"**Why gitmedic stopped:** {line(data.reason or 'none given')}",
        "## What was tried",
        _attempts(data.attempts),
        "## What a person should do",
        data.todo,
    ]
    return "\n\n".join(parts) + "\n\n"


def _attempts(attempts: Sequence[Attempt]) -> str:
    if not attempts:
        return "_Nothing: gitmedic opened no pull request for this incident._"
    rows = [
        "| {} | {} | {} | **{}** | {} → {} | {} |".format(
            a.number,
            (f"#{a.pr}" if a.pr is not None else "-")
            + (f" (reverted by #{a.revert_pr})" if a.revert_pr is not None else ""),
            cell(a.strategy),
            cell(a.outcome),
            f"{a.mu_before:g}",
            f"{a.mu_after:g}" if a.mu_after is not None else "not measured",
            cell(a.reason or "-"),
        )
        for a in attempts
    ]
    head = (
        "| Attempt | PR | Strategy | Outcome | mu before → after | Why |\n|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(rows) + "\n\n" + MU_EXPLAINED


def _evidence(
    data: EscalationInput, diagnosis: str, items: Sequence[Mapping[str, Any]], keep: int
) -> str:
    parts = ["## Evidence", finding_table(items, TABLE_ROWS)]
    if diagnosis:
        parts.append(details("The last diagnosis", diagnosis))
    if items:
        shown = json.dumps([dict(i) for i in items[:keep]], indent=1, sort_keys=True, default=str)
        left = len(items) - keep
        title = (
            f"All {len(items)} findings as JSON"
            if not left
            else (
                f"{keep} of {len(items)} findings as JSON ({left} left out to fit GitHub's limit)"
            )
        )
        parts.append(details(title, shown))
    parts.append(
        f"<sub>gitmedic · incident {untrusted(data.incident)} · app {untrusted(data.app)}</sub>"
    )
    return "\n\n".join(parts) + "\n"
