"""The dashboard's checkboxes: ``retry``, ``revert`` and ``hold`` beside each transaction.

As Renovate's Dependency Dashboard does, a person acts by ticking a box. Each box
gitmedic renders carries a hidden ``<!-- gitmedic:dashboard VERB PR -->`` marker,
and only that marker is read back, never the words beside it. A box offers what
the comment command would do on that PR now:

- a PR not merged yet (opened, gated, waiting for approval): ``hold`` and ``retry``;
- a merged PR being verified, or verified and kept: ``revert``;
- nothing else (a change being undone, undone, rejected or held for good: the
  command would only refuse). A revert's own PR gets no ``retry``: it carries no
  incident of the loop. The watch of a person's merge offers ``revert`` while it is
  verified, and nothing before: the person's PR is not the bot's to hold or retry.

A tick counts (:func:`newly_ticked`) only when the edit turned an unticked box of
the body before into a ticked one: a line a person adds already ticked is not a
box gitmedic rendered. The caller then keeps only the boxes the journal offers now
(:func:`offered`), so a marker copied by hand names nothing gitmedic did not offer.
Text beside a box comes from the journal through :func:`~.untrusted.untrusted`, so
it can never hold a marker of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gitmedic.bot.render.untrusted import untrusted
from gitmedic.reconciler.transaction import Phase, TxnState

VERBS = ("hold", "retry", "revert")  # the order boxes are shown and acted on
_BEFORE_MERGE = (Phase.PR_OPENED, Phase.GATED, Phase.AWAITING_APPROVAL)
_MERGED = (Phase.MERGED, Phase.SYNCED, Phase.COMMITTED)
_LABELS = {
    "hold": "hold #{pr}: do not merge it automatically",
    "retry": "retry: close #{pr} and try its incident again with a new attempt",
    "revert": "revert #{pr}: open a PR that undoes it",
}
_BOX = re.compile(
    r"^\s*[-*] \[(?P<mark>[ xX])\] "
    r"<!-- gitmedic:dashboard (?P<verb>[a-z]+) (?P<pr>[1-9][0-9]{0,9}) -->"
)


@dataclass(frozen=True, order=True)
class Control:
    verb: str
    pr: int


def controls_of(state: TxnState) -> tuple[Control, ...]:
    """The boxes one transaction gets (see the module docstring)."""
    pr = state.pr
    if pr is None or state.plan.strategy == "memory":
        return ()
    if state.phase in _BEFORE_MERGE and state.plan.strategy == "watch":
        verbs: tuple[str, ...] = ()  # its revert offered: that PR is the person's to merge
    elif state.phase in _BEFORE_MERGE:
        verbs = ("hold",) if state.plan.strategy == "revert" else ("hold", "retry")
    elif state.phase in _MERGED:
        verbs = ("revert",)
    else:
        verbs = ()
    return tuple(Control(verb, pr) for verb in verbs)


def offered(transactions: Iterable[TxnState]) -> frozenset[Control]:
    return frozenset(c for t in transactions for c in controls_of(t))


def render_actions(transactions: Sequence[TxnState]) -> str:
    """The Actions section: each transaction with boxes, then its boxes nested under it."""
    blocks = []
    for state in transactions:
        controls = controls_of(state)
        if not controls:
            continue
        p = state.plan
        head = f"- `{untrusted(p.txn_id)}` · {untrusted(p.app)} · #{state.pr} ({state.phase.value})"
        boxes = [
            f"  - [ ] <!-- gitmedic:dashboard {c.verb} {c.pr} --> "
            + _LABELS[c.verb].format(pr=c.pr)
            for c in controls
        ]
        blocks.append("\n".join([head, *boxes]))
    return "\n".join(blocks) or "_Nothing to act on._"


def ticked(body: str) -> dict[Control, bool]:
    """Every dashboard box in ``body`` and whether it is ticked (known verbs only)."""
    boxes: dict[Control, bool] = {}
    for match in map(_BOX.match, body.splitlines()):
        if match is not None and match["verb"] in VERBS:
            control = Control(match["verb"], int(match["pr"]))
            boxes[control] = boxes.get(control, False) or match["mark"] in "xX"
    return boxes


def newly_ticked(before: str, after: str) -> tuple[Control, ...]:
    """Boxes unticked in ``before`` and ticked in ``after``, in :data:`VERBS` order."""
    was = ticked(before)
    now = [c for c, on in ticked(after).items() if on and was.get(c) is False]
    return tuple(sorted(now, key=lambda c: (VERBS.index(c.verb), c.pr)))
