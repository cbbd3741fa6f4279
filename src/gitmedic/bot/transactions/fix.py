"""A fix's merge a person asked for: ``/gitmedic merge``, carried out by the next tick.

The fix's plan is made by the loop from its incident (:mod:`gitmedic.bot.controller.transact`);
what a person adds is the merge. The command approves the PR (the label the
machine's approval step reads) and, when its gate has passed, records an intent
(:func:`ask_merge`) and answers at once. The loop's next tick steps the PR's
transaction, whose approval step merges it through the machine (the head the gate
saw, main not moved) before the sync wait and the window; the tick then tells the
person on the PR what happened (:func:`carry_out_merges`). A bot PR no transaction
carries is merged by the tick itself, unless a person holds it.
"""

from __future__ import annotations

import logging

from gitmedic.bot.transactions.intents import Intents
from gitmedic.reconciler.forge import Forge, PrState, StatusState
from gitmedic.reconciler.transaction import TxnState
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT, HOLD_LABEL
from gitmedic.reconciler.transaction.journal import Journal

log = logging.getLogger(__name__)
MERGE = "merge"


def ask_merge(intents: Intents, pr: int, now: float) -> bool:
    """Record the merge of ``pr`` for the next tick (False: already asked)."""
    return intents.add(MERGE, str(pr), {"pr": pr}, now)


def txn_of(journal: Journal, app: str, pr: int) -> TxnState | None:
    """The latest transaction of ``app`` whose PR (or revert PR) is ``pr``."""
    found = [t for t in journal.transactions(app=app) if pr in (t.pr, t.revert_pr)]
    return found[-1] if found else None


def carry_out_merges(intents: Intents, journal: Journal, forge: Forge, app: str) -> None:
    """The tick's share, after its steps: each asked merge told on its PR, then done."""
    for item in intents.items(MERGE):
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
