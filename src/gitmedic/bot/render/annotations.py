"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=F,line=N,title=T::message`` lines on a job's output show on the
pull request's diff at that file and line without code scanning (which a
private repository only has with GitHub Advanced Security). Critical findings
and unreadable manifests are errors, warnings warnings, advice notices.

Escaping follows the runner's rules for workflow commands: in the message,
``%``, CR and LF are percent-encoded; in a property value ``:`` and ``,`` too,
since they separate properties. An annotation whose text still held a raw
newline would end the command early and print the rest as a plain log line.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.location import finding_location
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError

_COMMAND = {Severity.CRITICAL: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


def escape_data(text: str) -> str:
    for raw, encoded in _DATA_ESCAPES:
        text = text.replace(raw, encoded)
    return text


def escape_property(text: str) -> str:
    for raw, encoded in _PROPERTY_ESCAPES:
        text = text.replace(raw, encoded)
    return text


def command(name: str, message: str, properties: Iterable[tuple[str, object]]) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def to_annotations(findings: list[Finding], errors: list[ManifestError], snapshot: Snapshot) -> str:
    lines = [_finding(f, snapshot) for f in findings]
    lines += [_error(e) for e in errors]
    return "".join(line + "\n" for line in lines)


def _finding(f: Finding, snapshot: Snapshot) -> str:
    at = finding_location(snapshot, f)  # the line of the field, on the diff
    where = _where(at.file, at.line) if at is not None else []
    message = f"{f.resource}: {f.summary}" + (f". {f.evidence}" if f.evidence else "")
    title = f"gitmedic {f.detector}" + (f" ({f.rule})" if f.rule != f.detector else "")
    return command(_COMMAND[f.severity], message, [*where, ("title", title)])


def _error(e: ManifestError) -> str:
    # A detector that crashed is reported as "detector:<id>", which is no file.
    if e.file.startswith("detector:"):
        return command("error", e.message, [("title", f"gitmedic {e.file} failed")])
    return command("error", e.message, [*_where(e.file, e.line), ("title", "gitmedic")])


def _where(file: str, line: int) -> list[tuple[str, object]]:
    return [("file", file), ("line", line)] if line > 0 else [("file", file)]
