"""The memory PR's decision: the same policy as fixes, told in the PR's body.

Memory changes the bot's own behaviour (a learned rule fires, a learned
playbook routes the next incident), so it is held to the law a fix is held to.
The PR itself is a transaction (:mod:`gitmedic.bot.controller.memory_txn`): its gate
is the memory guard, published as ``gitmedic/gate`` like a fix's. Whether it
merges on its own is decided here by :func:`gitmedic.bot.policy.decide.decide` as
strategy ``memory`` (the built-in rules make guard-checked memory low risk; a
team's ``policy`` is taken as written, so ``auto_merge: never`` or a policy
without a memory rule leaves it for a person, who approves it with
``/gitmedic approve`` as any fix).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from gitmedic.bot.policy.decide import ChangeSummary, Decision, decide
from gitmedic.reconciler.config import PolicyConfig
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT

GUARD_GATE = "the memory guard (every file under .gitmedic/ validates)"


def memory_decision(files: Mapping[str, str | None], policy: PolicyConfig, now: float) -> Decision:
    """The policy's decision on a memory change: only files under ``.gitmedic/``, no objects."""
    lines = sum((text or "").count("\n") + 1 for text in files.values())
    change = ChangeSummary(strategy="memory", files=tuple(sorted(files)), changed_lines=lines)
    return decide(change, policy, datetime.fromtimestamp(now, tz=UTC))


def decision_section(decision: Decision) -> str:
    """The body's risk section: the decision, and when it waits, why and what approves."""
    rule = f"`{decision.matched_rule}`" if decision.matched_rule else "none (default)"
    lines = [
        "## Risk",
        "",
        f"**Risk:** {decision.risk}  ",
        f"**Rule:** {rule}  ",
        f"**Why:** {decision.reason}  ",
        f"**Gate (`{GATE_CONTEXT}`):** {GUARD_GATE}",
        "",
    ]
    if decision.auto_merge:
        lines.append("gitmedic merges this PR itself once the gate passes: the policy allows it.")
    else:
        lines.append(f"**Waiting:** {wait_reason(decision)}")
    return "\n".join(lines) + "\n"


def wait_reason(decision: Decision) -> str:
    return (
        f"the policy does not let gitmedic merge this itself ({decision.reason}). "
        "Comment `/gitmedic approve` (or approve the PR) and gitmedic merges it; "
        "`/gitmedic merge` merges it at once."
    )
