"""Schema validation and the selector rule in ``gitmedic detect``, located at file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifests.helpers import write
from tests.repos.conftest import gitmedic

BAD = """# the bad Deployment of issue 14
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: "three"
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web-v2
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""
WIDGETS = "".join(
    f"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w{i}\n" for i in range(3)
)


@pytest.mark.integration
def test_the_bad_deployment_has_a_schema_and_a_selector_finding_at_its_file_and_line(
    tmp_path: Path,
) -> None:
    write(tmp_path, {"bad.yaml": BAD})
    run = gitmedic("detect", "bad.yaml", "--format", "sarif", cwd=tmp_path)
    assert run.rc == 1
    results = run.json()["runs"][0]["results"]
    got = {
        r["ruleId"]: (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in results
    }
    # each at its field: ``replicas: "three"`` and the selector's matchLabels
    assert got == {"schema-invalid": ("bad.yaml", 7), "selector-template-mismatch": ("bad.yaml", 9)}
    text = gitmedic("detect", "bad.yaml", cwd=tmp_path)
    assert "Deployment/default/web  (bad.yaml:2)" in text.out
    assert "spec.replicas: 'three' is not of type 'integer'" in text.out
    assert "selector {'app': 'web'} does not match its pod template's labels" in text.out


@pytest.mark.integration
def test_a_kind_without_schema_is_info_once_and_the_version_is_chosen(tmp_path: Path) -> None:
    write(tmp_path, {"w.yaml": WIDGETS})
    run = gitmedic(
        "detect", "w.yaml", "--format", "json", "--kubernetes-version", "1.30", cwd=tmp_path
    )
    assert run.rc == 0
    [info] = run.json()["findings"]
    assert info["rule"] == "schema-unknown-kind" and info["severity"] == "info"
    assert "Kubernetes 1.30" in info["summary"]
    bad = gitmedic("detect", "w.yaml", "--kubernetes-version", "1.99", cwd=tmp_path)
    assert bad.rc == 2 and "the bundled schemas cover 1.25 to" in bad.err
