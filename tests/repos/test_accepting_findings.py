"""Accepting findings: a baseline in CI, the ignore annotation, detector include/exclude."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.config import ConfigError, DetectorsConfig
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import APPS
from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import gitmedic

SOCIAL = APPS / "social-network/openshift"
SCALED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  annotations:{notes}
spec:
  replicas: 0
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec: {{containers: [{{name: api, image: api:1, ports: [{{containerPort: 80}}]}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: api}}
spec: {{selector: {{app: api}}, ports: [{{port: 80}}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - {{name: web, image: web:1, env: [{{name: API_ADDR, value: "api:80"}}]}}
"""


def scaled(tmp_path: Path, notes: str) -> Path:
    return write(tmp_path, {"app.yaml": SCALED.format(notes=notes or " {}")}) / "app.yaml"


def detectors_on(path: Path) -> list[str]:
    snapshot = load_desired(path).snapshot
    return [f.detector for f in run_detectors(builtin_registry(), snapshot).findings]


def test_the_ignore_annotation_with_a_reason_drops_that_detector_only(tmp_path: Path) -> None:
    assert "scaled-to-zero" in detectors_on(scaled(tmp_path, ""))
    notes = (
        "\n    gitmedic.io/ignore: scaled-to-zero, probe-port"
        "\n    gitmedic.io/ignore-reason: parked until the Q3 migration"
    )
    assert "scaled-to-zero" not in detectors_on(scaled(tmp_path, notes))


def test_an_ignore_without_a_reason_is_not_honoured_and_says_so(tmp_path: Path) -> None:
    path = scaled(tmp_path, "\n    gitmedic.io/ignore: scaled-to-zero")
    found = run_detectors(builtin_registry(), load_desired(path).snapshot).findings
    [finding] = [f for f in found if f.detector == "scaled-to-zero"]
    assert "without gitmedic.io/ignore-reason it is not honoured" in finding.evidence


def test_include_and_exclude_choose_detectors_and_refuse_unknown_ids() -> None:
    ids = ["a", "b", "c"]
    assert DetectorsConfig().chosen(ids) == ids
    assert DetectorsConfig(include=("c", "a")).chosen(ids) == ["a", "c"]
    assert DetectorsConfig(include=("a", "b"), exclude=("b",)).chosen(ids) == ["a"]
    with pytest.raises(ConfigError, match=r"unknown detectors \['nope'\]"):
        DetectorsConfig(exclude=("nope",)).chosen(ids)


@pytest.mark.integration
def test_the_config_excludes_a_detector_from_detect(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    scaled(repo / "apps", "")
    config = "version: 1\napps: [{name: app, path: apps}]\ndetectors:\n  exclude: [ID]\n"
    write(repo, {".gitmedic/config.yaml": config.replace("ID", "scaled-to-zero")})
    commit_all(repo)
    run = gitmedic("detect", repo, "--format", "json")
    assert run.rc == 0 and run.json()["findings"] == [], run.out
    write(repo, {".gitmedic/config.yaml": config.replace("ID", "no-such-detector")})
    bad = gitmedic("detect", repo)
    assert bad.rc == 2 and "unknown detectors ['no-such-detector']" in bad.err


@pytest.fixture
def social(tmp_path: Path) -> Path:
    repo = tmp_path / "social"
    shutil.copytree(SOCIAL, repo / "openshift")
    init_repo(repo)
    commit_all(repo)
    return repo


@pytest.mark.integration
def test_social_network_with_a_baseline_fails_only_on_a_new_finding(social: Path) -> None:
    base = social / "gitmedic-baseline.json"
    app = (social / "openshift", "--namespace", "social-network")
    before = gitmedic("detect", *app, "--format", "json")
    assert before.rc == 1 and len(before.json()["findings"]) == 31
    wrote = gitmedic("detect", *app, "--write-baseline", base)
    assert wrote.rc == 0 and "wrote 31 accepted findings" in wrote.err
    assert len(json.loads(base.read_text())["findings"]) == 31

    accepted = gitmedic("detect", *app, "--baseline", base)
    assert accepted.rc == 0, accepted.out
    assert "31 accepted finding(s) not shown" in accepted.err

    frontend = social / "openshift/media-frontend.yaml"
    text = frontend.read_text()
    frontend.write_text(
        text.replace("    app: media-frontend\n---", "    app: media-frontnd\n---", 1)
    )
    new = gitmedic("detect", *app, "--baseline", base, "--format", "json")
    assert new.rc == 1
    [finding] = new.json()["findings"]
    assert finding["detector"] == "service-selector-unmatched"
    assert finding["resource"]["name"] == "media-frontend"


@pytest.mark.integration
def test_a_baseline_that_is_not_one_is_a_clear_error(social: Path) -> None:
    bad = social / "bad.json"
    bad.write_text('{"findings": 3}')
    run = gitmedic("detect", social / "openshift", "--baseline", bad)
    assert run.rc == 2 and "not a gitmedic baseline" in run.err
    missing = gitmedic("detect", social / "openshift", "--baseline", social / "none.json")
    assert missing.rc == 2 and "cannot read baseline" in missing.err
