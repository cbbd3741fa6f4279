"""The job summary: every finding worst first, inert repository text, GitHub's size cap."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gitmedic.bot.render import step_summary
from gitmedic.bot.render.step_summary import to_summary
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError


def _finding(name: str, severity: Severity, summary: str = "selects no pod") -> Finding:
    return Finding(
        "service-selector-unmatched",
        "service-selector-unmatched",
        severity,
        Resource("Service", "shop", name, "v1"),
        summary,
    )


def test_counts_lead_and_the_worst_come_first() -> None:
    findings = [_finding("a", Severity.INFO), _finding("b", Severity.CRITICAL)]
    errors = [ManifestError("deploy/x.yaml", 3, "not YAML")]
    text = to_summary(findings, errors, Snapshot([]), files=2)
    assert text.splitlines()[0] == "<!-- gitmedic critical=1 warning=0 info=1 errors=1 -->"
    assert "| not YAML | deploy/x.yaml:3 |" in text
    rows = [line for line in text.splitlines() if "Service/shop/" in line]
    assert [r.split("|")[3].strip() for r in rows] == ["Service/shop/b", "Service/shop/a"]


def test_repository_text_is_inert_in_a_cell() -> None:
    hostile = "x | </table><details><img src=x> @acme/admins `rm`"
    text = to_summary([_finding("a", Severity.WARNING, hostile)], [], Snapshot([]), files=1)
    row = next(line for line in text.splitlines() if "Service/shop/a" in line)
    assert "<" not in row.replace("<!--", "") and "&lt;/table&gt;" in row
    assert "x \\| &lt;" in row  # the pipe cannot end the cell
    assert "@acme" not in row and "@\u200bacme" in row
    assert row.count("|") - row.count("\\|") == 6  # five cells, still


def test_past_the_limit_the_table_stops_and_says_how_much_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(step_summary, "LIMIT_BYTES", 2_000)
    findings = [_finding(f"svc-{i:03}", Severity.WARNING, "y" * 80) for i in range(100)]
    text = to_summary(findings, [], Snapshot([]), files=1)
    assert len(text.encode()) <= 2_000 + 200
    shown = sum(1 for line in text.splitlines() if "Service/shop/svc-" in line)
    assert 0 < shown < 100
    assert f"*{100 - shown} more line(s) not shown" in text


def test_the_summary_and_sarif_files_are_redacted_as_stdout_is(tmp_path: Path) -> None:
    """Files written beside stdout leave the process too: a registered secret is masked."""
    from gitmedic.bot.cli.detect import Report, _write_extra_outputs
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.redact import REGISTRY

    REGISTRY.add("planted-db-pass-7c1e")
    leaky = _finding("db", Severity.CRITICAL, "env DB_PASSWORD is planted-db-pass-7c1e")
    report = Report([leaky], [], builtin_registry(), Snapshot([]), [])
    args = argparse.Namespace(sarif=str(tmp_path / "out.sarif"), summary=str(tmp_path / "s.md"))
    _write_extra_outputs(report, args)
    for name in ("out.sarif", "s.md"):
        text = (tmp_path / name).read_text()
        assert "Service/shop/db" in text and "planted-db-pass-7c1e" not in text, name
