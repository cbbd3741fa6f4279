"""The ``gitmedic`` command in a subprocess, as CI and users run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import Result

Run = Result  # the in-process runner's result: exit code, stdout, stderr


def gitmedic(*argv: str | Path, cwd: Path | None = None, timeout: float = 240) -> Run:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
