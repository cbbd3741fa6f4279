"""Tabs in manifests, through the real ``gitmedic detect`` (issue 22).

Every tab libyaml reads (kubectl and kustomize read the same) is read: at a line's end,
after a key's colon, before a comment, inside a flow collection. A tab used as
indentation is refused with the file and line, and the other files are still analysed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifests.helpers import write
from tests.repos.conftest import gitmedic

pytestmark = pytest.mark.integration

# teastore's shape (`selector:<TAB>`), and the other places libyaml allows a tab
TABS_LIBYAML_READS = (
    "apiVersion: apps/v1\t\n"
    "kind: Deployment\n"
    "metadata:\n"
    "  name:\tweb\t# the tab after the colon and before this comment\n"
    "spec:\n"
    "  selector:\t\n"
    "    matchLabels:\t\n"
    "      app: web\t\n"
    "  template:\n"
    "    metadata:\n"
    "      labels: {app: web}\n"
    "    spec:\n"
    "      containers:\n"
    "        - name: web\n"
    "          image: nginx:1.27\n"
    "          args: [--port,\t'8080',\n"
    "\t--verbose]\n"
)
TAB_INDENTED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: cfg\n"


def test_tabs_that_libyaml_reads_are_read(tmp_path: Path) -> None:
    write(tmp_path, {"app/deploy.yaml": TABS_LIBYAML_READS})
    run = gitmedic("detect", tmp_path / "app", "--format", "json")
    assert run.json()["errors"] == [], run.out
    assert run.rc in (0, 1), run.err
    text = gitmedic("detect", tmp_path / "app")
    assert "in 1 objects from 1 file" in text.out, text.out


def test_tab_indentation_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, {"app/deploy.yaml": TABS_LIBYAML_READS, "app/cm.yaml": TAB_INDENTED})
    run = gitmedic("detect", "app", "--format", "json", cwd=tmp_path)
    assert run.rc == 2
    (error,) = run.json()["errors"]
    assert (error["file"], error["line"]) == ("app/cm.yaml", 4)
    assert "tab character" in error["message"] and "indentation" in error["message"]
    text = gitmedic("detect", "app", cwd=tmp_path)
    assert "error: app/cm.yaml:4: invalid YAML: tab character" in text.err
    assert "in 1 objects from 2 files" in text.out, text.out  # deploy.yaml still analysed
