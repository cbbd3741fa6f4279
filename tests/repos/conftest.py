"""The ``gitmedic`` command in a subprocess, as CI and users run it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Run:
    rc: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


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
