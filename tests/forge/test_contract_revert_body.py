"""A revert PR's body, rewritten by the bot with what was measured, on every forge: the
revert marker kept (the PR is found again by it), and found again after a restart."""

from __future__ import annotations

from gitmedic.reconciler.forge import PrFilter
from tests.forge.backends import BRANCH, FIX, STATE, Backend

MEASURED = "Reverts #1 (Fix): mu 10 -> 18, so this PR undoes it."


def test_the_bot_describes_its_revert_and_the_marker_survives(backend: Backend) -> None:
    backend.push(BRANCH, FIX)
    number = backend.forge.ensure_pr(BRANCH, "main", "Fix", "b", (), STATE).number
    backend.forge.merge(number, backend.forge.get_pr(number).head_sha)
    revert = backend.forge.revert_pr(number)
    kept = dict(revert.bot_state or {})

    forge = backend.forge
    described = forge.ensure_pr(revert.branch, revert.base, revert.title, MEASURED, state=kept)
    assert described.number == revert.number and described.head_sha == revert.head_sha
    assert described.body.startswith(MEASURED)
    assert described.bot_state == kept and kept["reverts"] == number
    assert backend.forge.find_prs({"reverts": number}, PrFilter.ALL) == (described,)

    # A restarted transaction opens its revert again (the same PR) and describes it again.
    again = backend.reopen().revert_pr(number)
    assert again.number == revert.number
    redone = backend.forge.ensure_pr(again.branch, again.base, again.title, MEASURED, state=kept)
    assert redone.body.startswith(MEASURED) and redone.bot_state == kept
