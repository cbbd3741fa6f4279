"""A bad ``.gitmedic/config.yaml`` is refused naming the line of each problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.config import ConfigError
from gitmedic.reconciler.manifests.config_file import config_line, load_config

TEXT = """\
version: 1
apps:
  - name: web
    path: apps/web
    oracles:
      probes:
        - url: http://web/healthz
        - url: http://web/healthz
  - name: web
    path: apps/other
"""


def test_each_problem_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".gitmedic" / "config.yaml"
    path.parent.mkdir()
    path.write_text(TEXT)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert f"{path}:8: apps[0].oracles.probes[1].url: duplicate probe URL" in text
    assert f"{path}:9: apps[1].name: duplicate app name 'web'" in text


def test_a_schema_violation_points_at_its_value_or_its_nearest_written_parent() -> None:
    assert config_line(TEXT, ("apps", 0, "oracles", "probes", 1, "url")) == 8
    assert config_line(TEXT, ("apps", 1, "path")) == 10
    # a missing key (a required property) is located at the mapping that lacks it
    assert config_line(TEXT, ("apps", 1, "engine")) == 9
    assert config_line(TEXT, ()) == 1
