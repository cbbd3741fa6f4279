"""SARIF 2.1.0 for GitHub code scanning: each result at the file and line of its field."""

from __future__ import annotations

from typing import Any

from gitmedic import __version__
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.location import finding_location
from gitmedic.detectors.registry import Registry
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.CRITICAL: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def to_sarif(
    findings: list[Finding], errors: list[ManifestError], registry: Registry, snapshot: Snapshot
) -> dict[str, Any]:
    rules = [
        {
            "id": d.id,
            "name": "".join(w.capitalize() for w in d.id.split("-")),
            "shortDescription": {"text": d.spec.description},
            "fullDescription": {"text": d.spec.description},
            "help": {"text": d.spec.remediation},
            "defaultConfiguration": {"level": _LEVEL[d.spec.severity]},
            "properties": {"tags": sorted(d.spec.kinds)},
        }
        for d in registry
    ]
    index = {d.id: i for i, d in enumerate(registry)}
    results = [_result(f, index, snapshot) for f in findings]
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [_location(e.file, e.line)],
        }
        for e in errors
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gitmedic",
                        "version": __version__,
                        "informationUri": "https://github.com/gitmedic/gitmedic",
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not errors,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }


def _result(f: Finding, index: dict[str, int], snapshot: Snapshot) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.detector,
        "ruleIndex": index.get(f.detector, -1),
        "level": _LEVEL[f.severity],
        "message": {
            "text": f"{f.resource}: {f.summary}" + (f". {f.evidence}" if f.evidence else "")
        },
        "partialFingerprints": {"gitmedic/v1": f.fingerprint},
        "properties": {"rule": f.rule, "resource": f.resource.to_json()},
    }
    where = finding_location(snapshot, f)  # the field's line: a values key, or the manifest's
    if where is not None:
        result["locations"] = [_location(where.file, where.line)]
    return result


def _location(file: str, line: int) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"}}
    if line > 0:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}
