"""Mark each step an app's loop acts in: the tier's sign that a process is stepping an app.

Installed by ``tests/support/killhook/sitecustomize.py`` in a subprocess only, when
``GITMEDIC_TEST_STEP_MARKS`` names a folder. Each time a loop holds its app's writer
lease for a step (:meth:`gitmedic.bot.controller.loop.Loop.holds_lease` answers yes), the file
``<folder>/<app>`` gets the wall time. The journal's lease row used to be that sign, but
it is renewed only every third of its TTL (``reconciler/transaction/lease.py``), so it
no longer tells a step from a quiet process; nothing in ``gitmedic`` reads the variable.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from gitmedic.bot.controller.loop import Loop


def install(folder: str) -> None:
    marks = Path(folder)
    marks.mkdir(parents=True, exist_ok=True)
    inner = Loop.holds_lease

    def holds_lease(self: Any) -> bool:
        held = inner(self)
        if held:
            mark = marks / self.config.app
            partial = mark.with_name(f".{mark.name}.{os.getpid()}")
            partial.write_text(repr(time.time()))
            partial.replace(mark)  # a reader never sees half a number
        return held

    Loop.holds_lease = holds_lease  # type: ignore[method-assign]


HOOK = Path(__file__).parent / "killhook"
ROOT = Path(__file__).parents[2]  # not tests.support.tools': this loads in gitmedic's start-up


def marking_env(folder: Path) -> dict[str, str]:
    """The environment a ``gitmedic`` subprocess marks its steps in ``folder`` with."""
    path = os.pathsep.join([str(HOOK), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path, "GITMEDIC_TEST_STEP_MARKS": str(folder)}


def stepped_within(folder: Path, app: str, within_s: float) -> bool:
    """Whether a process marked a step of ``app`` in ``folder`` in the last ``within_s``."""
    try:
        at = float((folder / app).read_text())
    except (OSError, ValueError):
        return False
    return at >= time.time() - within_s
