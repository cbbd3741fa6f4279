"""Start-up of ``gitmedic detect`` stays light: no client library is imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import faulty_boutique

HEAVY = ("kubernetes", "github", "litellm", "fastapi", "httpx", "ruamel", "cel_expr_python")
PROBE = """
import json, sys
from gitmedic.bot.cli.main import main
rc = main(sys.argv[2:])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[1]))
print(json.dumps({"rc": rc, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.integration
@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_detect_imports_no_client_library(tmp_path: Path, fmt: str) -> None:
    path = faulty_boutique(tmp_path / "k.yaml", "selector")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY), "detect", str(path), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=60,
    )
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe == {"rc": 1, "heavy": []}


@pytest.mark.integration
def test_importtime_of_the_real_entry_point_shows_no_client_library(tmp_path: Path) -> None:
    path = faulty_boutique(tmp_path / "k.yaml")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitmedic", "detect", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "gitmedic" in imported and "yaml" in imported
    assert imported.isdisjoint(HEAVY)
