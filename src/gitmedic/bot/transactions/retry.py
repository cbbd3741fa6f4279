"""A person's retry of an incident: an intent the next tick turns into a new attempt.

``/gitmedic retry`` on an attempt's PR closes that PR and queues its incident
(:func:`queue_retry`; one queued retry per incident, however often asked). The
loop's tick carries the queue out (:func:`carry_out_retries`) through the loop's
own retry (:meth:`~gitmedic.bot.controller.loop.Loop.retry_queued`), which may answer
``None``: the item stays queued (after a restart the loop has not looked yet, or a
transaction of the app is in flight). Its result is told on the PR the person
commented on, then the item is marked done. A retry re-run after a crash is
recognised by the journal: the incident already has more attempts than when it
was queued, so it is not started twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from gitmedic.bot.transactions.intents import Intents, Item
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction.journal import Journal

log = logging.getLogger(__name__)
RETRY = "retry"


def queue_retry(intents: Intents, journal: Journal, incident: str, pr: int, now: float) -> bool:
    """Queue ``incident`` for a new attempt (False: already queued)."""
    attempts = len(journal.transactions(incident=incident))
    return intents.add(RETRY, incident, {"pr": pr, "attempts": attempts}, now)


def queued_retries(intents: Intents) -> list[str]:
    """Incidents queued for a new attempt, oldest first."""
    return [item.key for item in intents.items(RETRY)]


def carry_out_retries(
    intents: Intents,
    asked: list[Item],  # the tick's one read of the open intents: its retries
    journal: Journal,
    forge: Forge,
    retry: Callable[[str], str | None],  # None: not decidable yet, stays queued
) -> None:
    """The tick's share: each queued retry run (or kept), told, and marked done."""
    for item in asked:
        result = _retry(item, journal, retry)
        if result is not None:
            _retried(intents, forge, item, result)


def _retry(item: Item, journal: Journal, retry: Callable[[str], str | None]) -> str | None:
    incident = item.key
    if len(journal.transactions(incident=incident)) > int(item.data["attempts"]):
        # Run before a crash that came before its done mark: the journal has its attempt.
        result: str | None = "already retried"
    else:
        result = retry(incident)
    log.info("retry of %s: %s", incident, result or "kept queued until the loop can tell")
    return result


def _retried(intents: Intents, forge: Forge, item: Item, result: str) -> None:
    """Tell the person on the PR they commented on, then mark the item done."""
    pr = int(item.data.get("pr", 0))
    if pr:
        forge.ensure_comment(pr, "retry", f"Retry of incident {item.key}: {result}.")
    intents.finish(RETRY, item.key, result)
