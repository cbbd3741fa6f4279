"""Through the real ``gitmedic detect``: locations at the field, names and lines never masked.

One file of the real shape, named as teams name such files (``app-secret.yaml``):
a Secret whose username is an ordinary word that is also the name of a Service,
a password that also sits in a DSN and in a malformed annotation, a Service whose
selector matches nothing. Every format must point each finding at the line of the
field it is about, keep the Service's name and the file's line numbers readable,
and still mask the password wherever a finding quotes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, init_repo

PASSWORD = "Sup3r-s3cret-Pw"
MANIFEST = f"""\
apiVersion: v1
kind: Secret
metadata:
  name: frontend-credentials
stringData:
  username: frontend
  password: {PASSWORD}
---
apiVersion: v1
kind: Service
metadata:
  name: frontend
spec:
  selector:
    app: frontend-v2
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
spec:
  replicas: 2
  selector:
    matchLabels:
      app: frontend
  template:
    metadata:
      labels:
        app: frontend
    spec:
      containers:
      - name: web
        image: registry.example.com/frontend:1.0
        ports:
        - containerPort: 8080
        env:
        - name: DATABASE_URL
          value: postgres://app:{PASSWORD}@orders-db:5432/app
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    note: [{PASSWORD}]
"""
FILE = "apps/app-secret.yaml"
# the line of each finding's field: the selector, the env value, the annotation
AT = {"service-selector-unmatched": 14, "env-service-address": 41, "schema-invalid": 48}


def detect(repo: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    argv = ["detect", str(repo / "apps"), "--namespace", "shop", "--format", fmt]
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
        cwd=repo,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    (repo / "apps").mkdir()
    (repo / FILE).write_text(MANIFEST)
    commit_all(repo, "an app")
    return repo


@pytest.mark.integration
def test_json_findings_carry_the_file_and_line_of_their_field(repo: Path) -> None:
    done = detect(repo, "json")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert {f["detector"]: (f["file"], f["line"]) for f in findings} == {
        d: (FILE, line) for d, line in AT.items()
    }
    names = {f["resource"]["name"] for f in findings}
    assert names == {"frontend", "settings"}, "a Secret value never masks a resource name"
    assert PASSWORD not in done.stdout and "****" in done.stdout


@pytest.mark.integration
def test_text_sarif_and_annotations_point_at_the_field_and_keep_names(repo: Path) -> None:
    text, sarif, github = (detect(repo, fmt) for fmt in ("text", "sarif", "github"))
    assert f"spec.selector at {FILE}:{AT['service-selector-unmatched']}" in text.stdout
    assert f"({FILE}:9)" in text.stdout, "the object's line, unmasked in a *secret* file"
    assert "Service/shop/frontend" in text.stdout
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    located = {
        r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results
    }
    assert located == AT
    assert f"file={FILE},line={AT['schema-invalid']}," in github.stdout
    assert "Service/shop/frontend: Service frontend selects no pods" in github.stdout
    for done in (text, sarif, github):
        assert PASSWORD not in done.stdout + done.stderr
