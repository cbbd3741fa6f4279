"""The tick's share of what people asked: one read of the app's open intents, each
kind handed to its transaction's module (retries run, asked merges told, queued
watches of a serve of before started). A revert asked for, or a person's merge to
watch, is already a plan in the journal and is stepped with the others."""

from __future__ import annotations

from collections.abc import Callable

from gitmedic.bot.transactions.fix import MERGE, carry_out_merges
from gitmedic.bot.transactions.intents import Intents
from gitmedic.bot.transactions.retry import RETRY, carry_out_retries
from gitmedic.bot.transactions.watch import QUEUED, adopt_queued
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction.forge_ports import ForgePorts


def carry_out(
    intents: Intents,
    forge: Forge,
    retry: Callable[[str], str | None],  # the loop's new attempt (None: not yet decidable)
    ports: Callable[[], ForgePorts],
) -> None:
    """After the tick's steps, so a merge it made is told with its SHA. Most ticks find
    nothing asked: one read, then nothing."""
    asked = intents.open()
    if not asked:
        return
    journal, app = intents.journal, intents.app
    carry_out_retries(intents, asked.get(RETRY, []), journal, forge, retry)
    carry_out_merges(intents, asked.get(MERGE, []), journal, forge, app)
    adopt_queued(intents, asked.get(QUEUED, []), journal, forge, app, ports)
