"""SARIF 2.1.0 for GitHub code scanning: each result at its object's file and line."""

from __future__ import annotations

from typing import Any

from gitmedic import __version__
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.origin import finding_origin
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
    src = snapshot.source(f.resource)
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
    origin = finding_origin(
        snapshot.get(f.resource.kind, f.resource.namespace, f.resource.name), f.params
    )
    if origin is not None:  # a rendered field: where its value is written
        result["locations"] = [_location(origin.file, origin.line)]
    elif src is not None:
        result["locations"] = [_location(src.file, src.line)]
    return result


def _location(file: str, line: int) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"}}
    if line > 0:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}
