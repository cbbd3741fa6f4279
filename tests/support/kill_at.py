"""SIGKILL the process at a journal phase: the crash tests' deterministic kill points.

Installed by ``tests/support/killhook/sitecustomize.py`` in a subprocess only.
A spec is ``[before:]<label>[@<n>]``: the label of a transaction record is its
phase (``pr-opened``, ``merged``, ...), ``announced`` for the record that says
the outcome was told, ``measured-sync`` / ``measured-window`` for a measurement
of the sync wait or of the verification window; an incident's journal writes
are ``incident-<status>`` and its memory PR's ``memory-<step>``. Without
``before:`` the kill comes right after the ``n``-th such write committed; with
it, right before the write (the action it records already happened). A ``stop:``
prefix sends SIGSTOP instead: the process halts there, every thread with it (a
Lease renewal too), for the test to read the journal and SIGKILL it itself.

The random moments count operations instead of time (a wall-clock moment depends on
the machine's load): an operation is any journal write (of any label) or any call of
the local forge's verbs, which land between the journal's writes (the action done,
its record not written yet). ``op@<n>`` kills right after the ``n``-th operation
returned; ``count:<file>`` kills nothing and writes, at exit, how many operations the
run took, so a test picks a seeded ``n`` that is inside the run whatever its timing.
"""

from __future__ import annotations

import atexit
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.transaction.journal import Journal
from gitmedic.reconciler.transaction.model import Record


def record_label(record: Record) -> str:
    if record.data.get("announced"):
        return "announced"
    measurement = record.data.get("measurement")
    if measurement is not None:  # a measurement of the sync wait or of the window
        return f"measured-{measurement['stage']}"
    return record.phase.value


JOURNAL_WRITES = ("append", "save_incident", "note_memory")


def install(spec: str) -> None:
    if spec.startswith(("op@", "count:")):
        _install_operations(spec)
        return
    halt = signal.SIGSTOP if spec.startswith("stop:") else signal.SIGKILL
    spec = spec.removeprefix("stop:")
    before = spec.startswith("before:")
    label, _, nth = spec.removeprefix("before:").partition("@")
    target = int(nth or "1")
    seen = [0]

    def hit(found: str, when_before: bool) -> None:
        if found != label or when_before != before:
            return
        if when_before:
            seen[0] += 1
        if seen[0] == target:
            os.kill(os.getpid(), halt)

    def counting(found: str) -> None:
        if found == label and not before:
            seen[0] += 1
            hit(found, False)

    _wrap(Journal, "append", lambda a: record_label(a[1]), hit, counting)
    _wrap(Journal, "save_incident", lambda a: f"incident-{a[0].status}", hit, counting)
    _wrap(Journal, "note_memory", lambda a: f"memory-{a[1]}", hit, counting)


def _wrap(
    cls: type,
    name: str,
    label_of: Callable[[tuple[Any, ...]], str],
    hit: Callable[[str, bool], None],
    after: Callable[[str], None],
) -> None:
    inner = getattr(cls, name, None)
    if inner is None:
        return

    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = label_of(args)
        hit(found, True)
        result = inner(self, *args, **kwargs)
        after(found)
        return result

    setattr(cls, name, wrapped)


def forge_verbs() -> list[str]:
    """The local forge's public methods: its verbs, and what people do on it."""
    return sorted(n for n in dir(LocalForge) if not n.startswith("_") and _is_method(n))


def _is_method(name: str) -> bool:
    return callable(getattr(LocalForge, name, None)) and not isinstance(
        LocalForge.__dict__.get(name), staticmethod | classmethod
    )


def _install_operations(spec: str) -> None:
    """``op@<n>``: SIGKILL right after the ``n``-th operation; ``count:<file>``: the
    number of operations written to that file at exit."""
    done = [0]
    target = int(spec.removeprefix("op@")) if spec.startswith("op@") else 0
    if spec.startswith("count:"):
        tally = spec.removeprefix("count:")
        atexit.register(lambda: Path(tally).write_text(str(done[0])))

    def operation() -> None:
        done[0] += 1
        if done[0] == target:
            os.kill(os.getpid(), signal.SIGKILL)

    for name in JOURNAL_WRITES:
        _after_each(Journal, name, operation)
    for name in forge_verbs():
        _after_each(LocalForge, name, operation)


def _after_each(cls: type, name: str, then: Callable[[], None]) -> None:
    inner = getattr(cls, name, None)
    if inner is None:
        return

    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = inner(self, *args, **kwargs)
        then()
        return result

    setattr(cls, name, wrapped)
