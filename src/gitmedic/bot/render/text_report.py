"""The human format of ``gitmedic detect``: findings grouped by resource, worst first."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.finding_field import finding_origin
from gitmedic.detectors.location import finding_location
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError

_LABEL = {Severity.CRITICAL: "CRITICAL", Severity.WARNING: "WARNING ", Severity.INFO: "info    "}


def to_text(
    findings: list[Finding], errors: list[ManifestError], snapshot: Snapshot, files: int
) -> str:
    lines: list[str] = []
    by_resource = sorted(findings, key=lambda f: (f.resource, -f.severity.rank, f.detector))
    for resource, group in groupby(by_resource, key=lambda f: f.resource):
        src = snapshot.source(resource)
        where = f"  ({src.file}:{src.line})" if src else ""
        lines.append(f"{resource}{where}")
        for f in group:
            lines.append(f"  {_LABEL[f.severity]} {f.detector:30} {f.summary}")
            if f.evidence:
                lines.append(f"  {'':9} {'':30} {f.evidence}")
            lines += _where(snapshot, f)
        lines.append("")
    counts = Counter(f.severity for f in findings)
    parts = [f"{counts[s]} {s.value}" for s in Severity if counts[s]][::-1]
    summary = f"{len(findings)} finding{'s' * (len(findings) != 1)}"
    if parts:
        summary += f" ({', '.join(parts)})"
    summary += f" in {len(snapshot)} objects from {files} file{'s' * (files != 1)}"
    if errors:
        summary += f"; {len(errors)} error{'s' * (len(errors) != 1)}"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def _where(snapshot: Snapshot, f: Finding) -> list[str]:
    """The line that sets the finding's field: a values key, or the field in its manifest."""
    origin = finding_origin(
        snapshot.get(f.resource.kind, f.resource.namespace, f.resource.name), f.params
    )
    if origin is not None:
        return [f"  {'':9} {'':30} set by {origin.key} at {origin.file}:{origin.line}"]
    at = finding_location(snapshot, f)
    if at is None or not at.field:
        return []
    return [f"  {'':9} {'':30} {at.field} at {at}"]
