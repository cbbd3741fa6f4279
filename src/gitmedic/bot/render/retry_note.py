"""The section a retry PR opens with: the attempt it follows, linked, and what the oracles
found on it, so a reviewer sees why this attempt differs without digging up the old PR.
"""

from __future__ import annotations

from collections.abc import Mapping

from gitmedic.bot.render.evidence import bullet_list, finding_table, line
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_body import measured
from gitmedic.reconciler.transaction import TxnState

LIMIT = 30  # oracle lines and caused findings shown (the undone PR's revert has them all)


def retry_section(undone: TxnState) -> str:
    """Markdown for the retry's body, ending in a blank line (the next section follows)."""
    plan = undone.plan
    pr = f"#{undone.pr}" if undone.pr is not None else f"attempt {plan.attempt}"
    reverted = f", reverted by #{undone.revert_pr}" if undone.revert_pr is not None else ""
    why = line(undone.reason or "no reason recorded")
    caused = [c for c in undone.caused if isinstance(c, Mapping)]
    parts = [
        f"## Follows attempt {plan.attempt}",
        f"This retry follows attempt {plan.attempt} ({plan.strategy}), {pr}{reverted}, which "
        f"ended **{undone.outcome.value}**: {why}",
        measured(plan.mu_pre, undone.mu_post, pr),
        f"**What the oracles found on {pr}:**\n\n{bullet_list(undone.feedback, LIMIT)}",
    ]
    if caused:
        parts.append(f"**What {pr} caused:**\n\n{finding_table(caused, LIMIT)}")
    parts.append(MU_EXPLAINED)
    return "\n\n".join(parts) + "\n\n"
