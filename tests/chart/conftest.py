"""Rendering the Helm chart ``charts/gitmedic`` with the pinned helm."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.tools import ROOT, tool_path

CHART = ROOT / "charts" / "gitmedic"
# chart-testing's layout: the value sets CI lints and renders live in the chart's ci/.
VALUES = CHART / "ci"
VALUE_SETS = sorted(p.name.removesuffix("-values.yaml") for p in VALUES.glob("*-values.yaml"))
NAMESPACE = "gitmedic"


@dataclass(frozen=True)
class Helm:
    binary: str

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        # From the repository's root, where README's relative chart path points.
        return subprocess.run(
            [self.binary, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=ROOT
        )

    def template(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return self.run("template", "gitmedic", CHART, "--namespace", NAMESPACE, *args)

    def render(self, value_set: str, *extra: str) -> list[dict[str, Any]]:
        result = self.template("--values", values_file(value_set), *extra)
        assert result.returncode == 0, result.stderr
        return objects(result.stdout)


def values_file(value_set: str) -> Path:
    return VALUES / f"{value_set}-values.yaml"


def objects(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def one(objs: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind]
    return found


@pytest.fixture(scope="session")
def helm() -> Helm:
    return Helm(tool_path("helm"))
