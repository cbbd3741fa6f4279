"""``--format sarif``: valid SARIF 2.1.0, each result at its object's file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.variants import SPEC as VARIANTS
from tests.cli.conftest import Cli, faulty_boutique
from tests.conftest import APPS, DATA
from tests.manifests.helpers import commit_all, init_repo

SCHEMA = json.loads((DATA / "sarif/sarif-schema-2.1.0.json").read_text())


def validate(log: dict[str, Any]) -> None:
    validator = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_findings_on_a_real_app_validate_and_sit_at_their_fields_lines(
    cli: Cli, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", "selector", "target-port")
    commit_all(repo)
    result = cli("detect", repo / "deploy", "--format", "sarif", "--namespace", "boutique")
    assert result.rc == 1
    log = result.json()
    validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted([*(d.id for d in builtin_registry()), VARIANTS.id])
    located = {
        r["ruleId"]: (
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in run["results"]
    }
    # each at the line of its field: the env entry, the selector, the targetPort
    assert located == {
        "env-service-address": ({"uri": "deploy/app.yaml", "uriBaseId": "%SRCROOT%"}, 90),
        "service-selector-unmatched": ({"uri": "deploy/app.yaml", "uriBaseId": "%SRCROOT%"}, 122),
        "service-target-port": ({"uri": "deploy/app.yaml", "uriBaseId": "%SRCROOT%"}, 217),
    }
    fingerprints = {
        f["detector"]: f["fingerprint"]
        for f in cli(
            "detect", repo / "deploy", "--format", "json", "--namespace", "boutique"
        ).json()["findings"]
    }
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["partialFingerprints"] == {"gitmedic/v1": fingerprints[r["ruleId"]]}
        # the two injected faults are critical; the app's own finding is advice
        expected = "note" if r["ruleId"] == "env-service-address" else "error"
        assert r["level"] == expected
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_a_clean_app_is_a_valid_empty_run(cli: Cli) -> None:
    result = cli(
        "detect", APPS / "sock-shop/deploy/kubernetes/complete-demo.yaml", "--format", "sarif"
    )
    assert result.rc == 0
    validate(result.json())
    assert result.json()["runs"][0]["results"] == []


TAB_INDENTED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n"


def test_tab_indentation_is_a_tool_execution_notification(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (teastore's trailing tabs, which this test used to read, are valid YAML: issue 22)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "ok.yaml").write_text(TAB_INDENTED.replace("\t", "  "))
    (tmp_path / "app" / "tabbed.yaml").write_text(TAB_INDENTED.replace("name: a", "name: b"))
    monkeypatch.chdir(tmp_path)
    result = cli("detect", "app", "--format", "sarif")
    assert result.rc == 2
    log = result.json()
    validate(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "tab character" in note["message"]["text"]
    physical = note["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "app/tabbed.yaml", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 4}


def test_errors_without_a_line_still_validate(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("bases: {broken\n")
    result = cli("detect", tmp_path, "--format", "sarif")
    assert result.rc == 2
    validate(result.json())
