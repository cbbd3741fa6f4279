"""Test support: SIGKILL this process at a journal phase (``GITMEDIC_TEST_KILL_AT``).

Put this folder on ``PYTHONPATH`` and Python imports it at start-up, before
``gitmedic``'s CLI runs. ``GITMEDIC_TEST_KILL_AT=<phase>[@<n>]`` kills the process
with SIGKILL right after the ``n``-th (default first) journal write of that phase
is committed; ``before:<phase>[@<n>]`` kills it right before that write, after
the action the record would describe already happened; ``stop:<spec>`` stops it
(SIGSTOP) there instead, for the test to kill. Nothing in ``gitmedic``
reads the variable: the journal's writes are wrapped here, in the test process
only, so the production path is exactly what runs.
"""

from __future__ import annotations

import os

_SPEC = os.environ.get("GITMEDIC_TEST_KILL_AT", "")

if _SPEC:
    from tests.support.kill_at import install

    install(_SPEC)
