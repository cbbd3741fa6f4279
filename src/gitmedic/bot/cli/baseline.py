"""Baselines for ``gitmedic detect``: findings a team accepted, so only new ones fail CI.

``--write-baseline FILE`` records every current finding by fingerprint (the
fingerprint hashes detector, rule, resource and params, never the prose, so it
survives rewording and line moves); ``--baseline FILE`` drops the findings it
lists from the report and the exit code. The file is JSON meant to be committed
and reviewed: one entry per finding, sorted, with the summary for people.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmedic.detectors.finding import Finding

VERSION = 1


class BaselineError(Exception):
    """The baseline file cannot be read or is not a gitmedic baseline."""


@dataclass(frozen=True)
class Filtered:
    new: list[Finding]
    accepted: int  # findings the baseline lists that are still present
    stale: int  # baseline entries no longer found (fixed since): worth pruning


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    entries = sorted(
        (
            {
                "fingerprint": f.fingerprint,
                "detector": f.detector,
                "resource": str(f.resource),
                "summary": f.summary,
            }
            for f in findings
        ),
        key=lambda e: (e["detector"], e["resource"], e["fingerprint"]),
    )
    text = json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    return len(entries)


def read_baseline(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise BaselineError(f"{path}: not a gitmedic baseline (version {VERSION})")
    entries = data.get("findings")
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries
    ):
        raise BaselineError(f"{path}: findings must be a list of entries with a fingerprint")
    return {e["fingerprint"] for e in entries}


def apply_baseline(findings: list[Finding], accepted: set[str]) -> Filtered:
    present = {f.fingerprint for f in findings}
    return Filtered(
        [f for f in findings if f.fingerprint not in accepted],
        len(present & accepted),
        len(accepted - present),
    )
