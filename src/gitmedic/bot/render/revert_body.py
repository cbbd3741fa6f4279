"""The body of a revert PR gitmedic opens because its own change made the app worse.

The forge's default body is "Reverts #4.", which tells a reviewer nothing about
why. This one says which PR it undoes (linked) and what was measured: mu at the
checkpoint and after the change (explained in a sentence), the verdict, what
the oracles saw, and the findings the change caused; then what happens next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gitmedic.bot.render.evidence import bullet_list, finding_table, line
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.reconciler.transaction import TxnState

LIMIT = 50  # rows of oracle lines and of caused findings (the journal keeps them all)


def revert_body(state: TxnState) -> str:
    plan = state.plan
    pr = f"#{state.pr}" if state.pr is not None else "the change"
    what = f"attempt {plan.attempt} for incident `{plan.incident}`" if plan.attempt else "change"
    return "\n\n".join(
        [
            f"Reverts {pr} ({line(plan.title)}): gitmedic's {what} in **{plan.app}** "
            "did not pass its verification, so this PR undoes it.",
            "## What was measured",
            measured(plan.mu_pre, state.mu_post, pr),
            f"**Verdict:** {line(state.reason or 'none recorded')}",
            f"**What the oracles saw after {pr}:**\n\n{bullet_list(state.feedback, LIMIT)}",
            f"**What {pr} caused** (firing after it, not before):\n\n"
            + finding_table(_findings(state.caused), LIMIT),
            MU_EXPLAINED,
            "## What happens next",
            _next(state.plan.revert_auto_merge),
        ]
    )


def measured(mu_pre: float, mu_post: float | None, pr: str) -> str:
    after = (
        f"{mu_post:g}" if mu_post is not None else "not measured (undone before any measurement)"
    )
    return f"| | mu |\n|---|---|\n| before {pr} | {mu_pre:g} |\n| after {pr} | {after} |"


def _next(at_once: bool) -> str:
    merged = (
        "This revert is merged at once (undo is never gated)"
        if at_once
        else "This revert waits for a person (`policy.revert_regressions: approval`): "
        "comment `/gitmedic approve` to merge it"
    )
    return (
        f"{merged}; gitmedic then checks that mu is back where it was. If attempts are "
        "left it retries with what the oracles saw, otherwise it escalates to a person."
    )


def _findings(items: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [i for i in items if isinstance(i, Mapping)]
