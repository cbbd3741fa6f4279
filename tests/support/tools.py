"""The pinned Go tools of ``.ci/tools.txt`` (helm, kube-score, actionlint, ...).

``make test`` builds them with ``.ci/tools.sh`` and puts them on PATH; a test
asks :func:`tool_path` so that a targeted ``pytest`` run outside make finds the
same pinned build in the tools cache. A missing tool fails the test (it never
skips): CI always has them, and a skipped check would pass without checking.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".ci" / "tools.txt"


def pinned_versions() -> dict[str, str]:
    versions = {}
    for line in MANIFEST.read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            versions[fields[0]] = fields[1]
    return versions


def tools_dir() -> Path:
    return Path(os.environ.get("GITMEDIC_TOOLS") or Path.home() / ".cache" / "gitmedic-tools")


def tool_path(name: str) -> str:
    version = pinned_versions()[name]
    pinned = tools_dir() / f"{name}-{version}" / name
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return str(pinned)
    found = shutil.which(name)
    if found:
        return found
    pytest.fail(f"{name} {version} is not installed: run `make tools` (or .ci/tools.sh {name})")
