"""The one sentence that says what mu is, for every body that shows a mu.

A reviewer reading "mu 10 -> 18" on a revert PR has no way to know what the
numbers mean; the sentence names the signals and their weights
(:func:`gitmedic.reconciler.oracles.observation.severity`) and the rule the
transaction applies, so the number can be checked by hand.
"""

from __future__ import annotations

MU_EXPLAINED = (
    "_mu is gitmedic's score of how unwell the app is: 10 per critical alert, 4 per "
    "warning alert, 8 per failing probe, 10 per workload fully down and 5 per critical "
    "finding, 0 when nothing is wrong; a change is kept only if mu does not rise._"
)
