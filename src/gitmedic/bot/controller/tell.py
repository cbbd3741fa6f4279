"""Tell a person: every transaction that ends failed or held opens or updates an issue.

A fix PR waiting for approval says so on the PR, but nobody watches every PR;
a transaction that ended ``failed`` (an alarm: a change left on main that the
bot could not verify or undo) or ``held`` says so nowhere else. So the
incident's issue (the same one an escalation uses, ``gitmedic: <incident>
needs a person``) is opened or updated with what happened, the PR, the reason,
what the bot had diagnosed and what a person can do. It is told once per
transaction and phase (the journal's incident row keeps what was told), so a
process stepping the same held transaction again writes nothing; when the
incident later resolves, the issue is updated and closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.bot.render.escalation import EscalationInput, attempt_of, render_escalation
from gitmedic.bot.responder.incident import Incident
from gitmedic.reconciler.forge import Forge, IssueState
from gitmedic.reconciler.transaction import Phase, TxnState

LABELS = ("gitmedic",)


def issue_title(incident_id: str) -> str:
    return f"gitmedic: {incident_id} needs a person"


def needs_telling(state: TxnState) -> bool:
    """Failed, held, or waiting for a person's approval."""
    return state.phase in (Phase.HELD, Phase.AWAITING_APPROVAL)


def told_key(state: TxnState) -> str:
    return f"{state.plan.txn_id}:{state.phase.value}:{state.alarm}"


def tell_held(forge: Forge, incident: Incident, state: TxnState) -> int:
    """Open or update the incident's issue for ``state``; its number."""
    body = _body(incident, state)
    return forge.ensure_issue(issue_title(incident.id), body, LABELS).number


def close_resolved(forge: Forge, number: int, how: str) -> None:
    """The incident resolved after a person was told: say how, and close the issue."""
    issue = forge.get_issue(number)
    if issue.state is IssueState.CLOSED:
        return
    body = f"**Resolved:** {how}\n\n---\n\n{issue.body}"
    forge.ensure_issue(issue.title, body, LABELS)
    forge.close_issue(number)


def _body(incident: Incident, state: TxnState) -> str:
    pr = f"PR #{state.pr}" if state.pr is not None else "its PR"
    what, todo = _status(state, pr)
    proposal: Mapping[str, Any] = state.plan.proposal
    evidence = tuple(e for e in proposal.get("evidence", ()) if isinstance(e, Mapping))
    plan = state.plan
    return render_escalation(
        EscalationInput(
            app=incident.app,
            incident=incident.id,
            happened=f"gitmedic's transaction for incident `{incident.id}` in "
            f"**{incident.app}** (attempt {plan.attempt}, {plan.strategy}) {what}",
            todo=todo,
            reason=state.reason,
            diagnosis=str(proposal.get("diagnosis") or ""),
            attempts=(attempt_of(state),),
            findings=evidence,
        )
    )


def _status(state: TxnState, pr: str) -> tuple[str, str]:
    if state.phase is Phase.AWAITING_APPROVAL:
        return (
            f"is **held**: {pr} waits for a person's approval.",
            f"review {pr}; comment `/gitmedic approve` to let it merge, deploy and be "
            "verified (undone if it does not help), or close it to refuse it.",
        )
    if state.alarm:
        return (
            "ended **failed**: main may hold a change the bot could neither verify nor undo.",
            f"check what main runs now against {pr} and its revert; revert by hand if "
            "needed, then comment `/gitmedic retry` on the PR.",
        )
    return (
        f"ended **held**: {pr} stopped and waits for a person.",
        f"read {pr}'s comments for why; fix what stopped it and comment "
        "`/gitmedic retry`, or close it.",
    )
