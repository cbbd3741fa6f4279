"""The strategies that name a transaction's kind in its plan, as plain data.

The attempt policy (:mod:`gitmedic.bot.controller.attempts`) decides from them without
importing the kinds' modules, which drive forges and clusters.
"""

from __future__ import annotations

MEMORY = "memory"  # an incident's memory PR: not an attempt
REVERT = "revert"  # a revert a person asked for
WATCH = "watch"  # a person's merge, watched and judged
