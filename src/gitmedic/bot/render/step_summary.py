"""``detect --summary FILE``: every finding as a Markdown table for a CI job's summary page.

GitHub shows at most ten error and ten warning annotations of a step on the diff;
the rest are only in the log. The job summary ($GITHUB_STEP_SUMMARY) has room for
all of them, worst first, up to its limit of 1 MiB per step: past
:data:`LIMIT_BYTES` the table stops and says how many rows it left out (the SARIF
log and ``--format json`` have them all).

Every cell's text came from the repository (names, messages quoting field values),
so it is escaped: HTML is inert, ``|`` cannot end a cell, ``@`` mentions nobody.

The first line is a comment the Action reads for its outputs (counts by severity);
GitHub does not show it.
"""

from __future__ import annotations

import html
from collections import Counter

from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.location import finding_location
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError

LIMIT_BYTES = 1_000_000  # GitHub refuses a step summary over 1 MiB; keep a margin
_ICON = {Severity.CRITICAL: "🔴 critical", Severity.WARNING: "🟠 warning", Severity.INFO: "🔵 info"}


def to_summary(
    findings: list[Finding], errors: list[ManifestError], snapshot: Snapshot, files: int
) -> str:
    counts = Counter(f.severity for f in findings)
    marker = (
        f"<!-- gitmedic critical={counts[Severity.CRITICAL]} warning={counts[Severity.WARNING]}"
        f" info={counts[Severity.INFO]} errors={len(errors)} -->"
    )
    head = [
        marker,
        "## gitmedic detect",
        "",
        _totals(counts, len(errors), len(snapshot), files),
        "",
    ]
    body = _errors(errors) + _table(findings, snapshot)
    text, used = "\n".join(head) + "\n", 0
    kept: list[str] = []
    for line in body:
        used += len(line.encode()) + 1
        if len(text.encode()) + used > LIMIT_BYTES:
            left = len(body) - len(kept)
            kept.append(f"\n*{left} more line(s) not shown: see the annotations' SARIF log.*")
            break
        kept.append(line)
    return text + "\n".join(kept) + "\n\n"


def _totals(counts: Counter[Severity], errors: int, objects: int, files: int) -> str:
    parts = [
        f"**{counts[s]}** {s.value}" for s in (Severity.CRITICAL, Severity.WARNING, Severity.INFO)
    ]
    text = f"{' · '.join(parts)} in {objects} objects from {files} file(s)"
    return text + (f" · **{errors}** error(s): manifests that could not be read" if errors else "")


def _errors(errors: list[ManifestError]) -> list[str]:
    if not errors:
        return []
    lines = ["| Error | Where |", "|-------|-------|"]
    lines += [
        f"| {_cell(e.message)} | {_cell(f'{e.file}:{e.line}' if e.line else e.file)} |"
        for e in errors
    ]
    return [*lines, ""]


def _table(findings: list[Finding], snapshot: Snapshot) -> list[str]:
    if not findings:
        return ["No findings."]
    lines = ["| Severity | Detector | Resource | Where | Finding |", "|---|---|---|---|---|"]
    worst_first = sorted(findings, key=lambda f: (-f.severity.rank, f.detector, f.resource))
    for f in worst_first:
        at = finding_location(snapshot, f)
        where = f"{at.file}:{at.line}" if at is not None and at.line else (at.file if at else "")
        rule = f.detector if f.rule == f.detector else f"{f.detector} ({f.rule})"
        text = f.summary + (f". {f.evidence}" if f.evidence else "")
        lines.append(
            f"| {_ICON[f.severity]} | {_cell(rule)} | {_cell(str(f.resource))} "
            f"| {_cell(where)} | {_cell(text)} |"
        )
    return lines


def _cell(text: str) -> str:
    """Text from the repository, inert in a Markdown table cell."""
    escaped = html.escape(" ".join(text.split()), quote=False)
    return escaped.replace("|", "\\|").replace("@", "@\u200b").replace("`", "'")
