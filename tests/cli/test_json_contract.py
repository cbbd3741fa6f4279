"""``--format json`` is a contract (DESIGN.md): its exact shape, order and fingerprints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.conftest import Cli, faulty_boutique
from tests.manifests.helpers import commit_all, init_repo

FINDING_KEYS = [
    "detector",
    "rule",
    "severity",
    "resource",
    "related",
    "summary",
    "evidence",
    "playbooks",
    "params",
    "fingerprint",
    "file",
    "line",
]
RESOURCE_KEYS = ["apiVersion", "kind", "namespace", "name"]
ALL_FAULTS = ("selector", "target-port", "env-duplicate")


def findings(cli: Cli, *argv: str | Path) -> list[dict[str, Any]]:
    result = cli("detect", *argv, "--format", "json", "--namespace", "boutique")
    assert result.rc == 1, result.err
    report = result.json()
    assert list(report) == ["findings", "errors"] and report["errors"] == []
    found: list[dict[str, Any]] = report["findings"]
    return found


def test_every_finding_has_exactly_the_designed_shape(cli: Cli, tmp_path: Path) -> None:
    found = findings(cli, faulty_boutique(tmp_path / "k.yaml", *ALL_FAULTS))
    assert len(found) == 4  # the three faults and the app's own info finding
    for f in found:
        assert list(f) == FINDING_KEYS
        assert f["severity"] in ("critical", "warning", "info")
        assert list(f["resource"]) == RESOURCE_KEYS
        assert all(list(r) == RESOURCE_KEYS for r in f["related"])
        assert isinstance(f["summary"], str) and f["summary"]
        assert isinstance(f["evidence"], str)
        assert all(isinstance(p, str) for p in f["playbooks"])
        assert isinstance(f["params"], dict)
        assert isinstance(f["fingerprint"], str) and len(f["fingerprint"]) == 16


def test_findings_are_sorted_by_detector_kind_namespace_name(cli: Cli, tmp_path: Path) -> None:
    found = findings(cli, faulty_boutique(tmp_path / "k.yaml", *ALL_FAULTS))
    keys = [
        (f["detector"], f["resource"]["kind"], f["resource"]["namespace"], f["resource"]["name"])
        for f in found
    ]
    assert keys == sorted(keys)
    assert keys == [
        ("env-duplicate", "Deployment", "boutique", "frontend"),
        ("env-service-address", "Deployment", "boutique", "frontend"),
        ("service-selector-unmatched", "Service", "boutique", "frontend"),
        ("service-target-port", "Service", "boutique", "adservice"),
    ]


def test_errors_have_exactly_file_line_message(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: [\n")
    report = cli("detect", tmp_path, "--format", "json").json()
    assert [list(e) for e in report["errors"]] == [["file", "line", "message"]]


def test_fingerprints_are_stable_across_runs_and_between_rev_and_working_tree(
    cli: Cli, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", *ALL_FAULTS)
    commit_all(repo)
    first = findings(cli, repo / "deploy")
    again = findings(cli, repo / "deploy")
    at_rev = findings(cli, repo / "deploy", "--rev", "HEAD")
    assert first == again == at_rev
    # Prose and file positions are not part of the identity: edit a comment above.
    app = repo / "deploy/app.yaml"
    app.write_text("# a new comment line\n" + app.read_text())
    assert [f["fingerprint"] for f in findings(cli, repo / "deploy")] == [
        f["fingerprint"] for f in first
    ]
