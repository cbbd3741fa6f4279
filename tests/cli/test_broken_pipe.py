"""A reader that closes the pipe early (``gitmedic detect --list | head``) is no bug.

The writer stops quietly with 141 (128 + SIGPIPE, what a shell reports for a writer
the pipe killed), not with a traceback and "internal error".
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_a_closed_pipe_ends_the_listing_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write fails
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gitmedic", "detect", "--list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)

    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 141
