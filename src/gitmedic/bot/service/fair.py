"""Fair ticks over the repositories of ``serve --repos``: each tick steps every repository
once, starting one further along than the tick before, so none always goes first
(a slow repository delays the others' steps equally, tick after tick); a repository
whose step fails is logged and the others still step.

A tick fails (the monitor waits its whole interval, and ``/healthz`` sees no progress)
only when every repository's step failed: one repository whose clone cannot be
fetched must not make the liveness probe restart the process that serves the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Rotation(Generic[T]):
    """Every item once per :meth:`order`, each call starting one item further along."""

    def __init__(self, items: Sequence[T]) -> None:
        self.items = list(items)
        self._start = 0

    def order(self) -> list[T]:
        if not self.items:
            return []
        start = self._start % len(self.items)
        self._start = start + 1
        return self.items[start:] + self.items[:start]


class EveryStepFailed(RuntimeError):
    """No repository stepped in the tick."""


def fair_tick(
    rotation: Rotation[T], step: Callable[[T], None], name: Callable[[T], str]
) -> list[str]:
    """Step each item in the rotation's order; the names of those whose step failed."""
    order = rotation.order()
    failed = []
    for item in order:
        try:
            step(item)
        except Exception:  # said with the repository's name; the others still step
            log.exception("%s: monitor step failed", name(item), extra={"repository": name(item)})
            failed.append(name(item))
    if order and len(failed) == len(order):
        raise EveryStepFailed(f"every repository's step failed: {', '.join(failed)}")
    return failed
