"""Test support: SIGKILL this process at a journal phase (``GITMEDIC_TEST_KILL_AT``).

Put this folder on ``PYTHONPATH`` and Python imports it at start-up, before
``gitmedic``'s CLI runs. ``GITMEDIC_TEST_KILL_AT=<phase>[@<n>]`` kills the process
with SIGKILL right after the ``n``-th (default first) journal write of that phase
is committed; ``before:<phase>[@<n>]`` kills it right before that write, after
the action the record would describe already happened; ``stop:<spec>`` stops it
(SIGSTOP) there instead, for the test to kill. Nothing in ``gitmedic``
reads the variable: the journal's writes are wrapped here, in the test process
only, so the production path is exactly what runs.

``GITMEDIC_TEST_STEP_MARKS=<folder>`` marks each step the process acts in, per app
(:mod:`tests.support.step_marks`), for the real-cluster tier to see who steps what.
"""

from __future__ import annotations

import os

_SPEC = os.environ.get("GITMEDIC_TEST_KILL_AT", "")

if _SPEC:
    from tests.support.kill_at import install

    install(_SPEC)

_MARKS = os.environ.get("GITMEDIC_TEST_STEP_MARKS", "")

if _MARKS:
    from tests.support.step_marks import install as mark_steps

    mark_steps(_MARKS)
