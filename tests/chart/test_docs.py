"""The chart's README is what helm-docs generates from values.yaml, never hand-edited."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.chart.conftest import CHART
from tests.support.tools import tool_path

pytestmark = pytest.mark.integration


def _generated(chart: Path) -> str:
    subprocess.run(
        [tool_path("helm-docs"), "--log-level", "warning"],
        cwd=chart,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return (chart / "README.md").read_text()


def test_the_chart_readme_is_generated_from_values(tmp_path: Path) -> None:
    copy = tmp_path / "gitmedic"
    shutil.copytree(CHART, copy)
    assert _generated(copy) == (CHART / "README.md").read_text(), (
        "charts/gitmedic/README.md is out of date: run `make chart-docs`"
    )


def test_every_value_is_documented(tmp_path: Path) -> None:
    copy = tmp_path / "gitmedic"
    shutil.copytree(CHART, copy)
    rows = [line for line in _generated(copy).splitlines() if line.startswith("| ")][1:]
    undocumented = [row.split("|")[1].strip() for row in rows if row.rstrip().endswith("|  |")]
    assert undocumented == []
