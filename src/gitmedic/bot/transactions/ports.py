"""Each kind's ports: the ports of the app, as the plan's kind needs them."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.transactions.kinds import MEMORY
from gitmedic.bot.transactions.memory import MemoryPorts
from gitmedic.bot.transactions.revert import RevertPorts, reverted_pr
from gitmedic.bot.transactions.watch import WatchPorts, watched_pr
from gitmedic.reconciler.transaction import Plan
from gitmedic.reconciler.transaction.forge_ports import ForgePorts


def ports_of(plan: Plan, ports: ForgePorts, repo: Path) -> ForgePorts:
    """``ports`` (the app's) for ``plan``'s kind: a fix's as they are, a memory PR's, a
    requested revert's, a watch's (``repo``: the clone the memory guard checks out)."""
    if plan.strategy == MEMORY:
        return MemoryPorts(ports, repo)
    if reverted_pr(plan) is not None:
        return RevertPorts.of(ports)
    if watched_pr(plan) is not None:
        return WatchPorts.of(ports)
    return ports
