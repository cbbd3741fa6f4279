"""The bodies of revert PRs of a person's change: asked for by a person, or offered by the watch.

The transaction's own revert (:mod:`.revert_body`) says what was measured and
links what it undoes; these two keep that anatomy instead of the forge's bare
"Reverts #N.":

- :func:`requested_revert_body`: ``/gitmedic revert`` (a comment or a dashboard
  box). Who asked, where and why (their words after the command, escaped), mu
  when they asked (the value the revert is then verified against) and what
  happens next: the revert is carried like any change;
- :func:`watched_revert_body`: a person's merge watched after it deployed made
  the app worse. mu before and after the merge, the verdict, what the oracles saw
  and the criticals firing, and that the revert is offered, never merged by
  gitmedic on its own.

Every text a person or the cluster wrote goes through
:func:`~.evidence.line` / :func:`~.evidence.bullet_list` (escaped, one line,
bounded), so it can neither forge a marker nor ping a team.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitmedic.bot.render.evidence import bullet_list, line
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_body import LIMIT, measured
from gitmedic.bot.render.untrusted import untrusted


@dataclass(frozen=True)
class Asked:
    """Who asked for a revert, where, and in their words why ("" when they gave none)."""

    by: str
    where: str  # "in a comment on #7", "on the dashboard"
    why: str = ""


def requested_revert_body(pr: int, title: str, app: str, mu_pre: float, asked: Asked) -> str:
    why = f"> {line(asked.why)}" if asked.why.strip() else "_No reason given with the command._"
    who = untrusted(f"@{asked.by}") if asked.by else "a person"
    return "\n\n".join(
        [
            f"Reverts #{pr} ({line(title)}) in **{line(app)}**: {who} asked for it with "
            f"`/gitmedic revert` {line(asked.where)}.",
            "## Why",
            why,
            "## What was measured",
            f"| | mu |\n|---|---|\n| when the revert was asked | {mu_pre:g} |",
            MU_EXPLAINED,
            "## What happens next",
            "gitmedic carries this revert like any change: its gate, then the merge (at once: "
            "undo is never gated), the sync, and a verification that mu is no higher than "
            f"{mu_pre:g}, its value when the revert was asked.",
        ]
    )


def watched_revert_body(
    pr: int,
    merge_sha: str,
    title: str,
    app: str,
    mu: tuple[float, float | None],
    verdict: str,
    evidence: Sequence[str],
) -> str:
    mu_pre, mu_post = mu
    return "\n\n".join(
        [
            f"Reverts #{pr} ({line(title)}): a person's change to **{line(app)}**, merged as "
            f"`{line(merge_sha[:12])}`, made the app worse once it deployed, so gitmedic offers "
            "to undo it.",
            "## What was measured",
            measured(mu_pre, mu_post, f"#{pr}"),
            f"**Verdict:** {line(verdict or 'none recorded')}",
            f"**What the oracles saw after #{pr}:**\n\n{bullet_list(list(evidence), LIMIT)}",
            MU_EXPLAINED,
            "## What happens next",
            "This revert is offered, not merged: gitmedic never undoes a person's change on "
            "its own. Merge it, or comment `/gitmedic merge` here.",
        ]
    )
