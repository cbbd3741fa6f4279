"""``gitmedic detect``: desired-state (or live) detection, rendered for people or machines."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

from gitmedic.bot.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.registry import Registry, UnknownDetectorError
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.parse import ManifestError


@dataclass
class Report:
    """Everything one detect run produced: what every output format renders."""

    findings: list[Finding]
    errors: list[ManifestError]
    registry: Registry
    snapshot: Snapshot
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "findings": [f.to_json() for f in self.findings],
            "errors": [e.to_json() for e in self.errors],
        }


def run_detect(args: argparse.Namespace) -> int:
    registry = _registry(args.detector)
    if args.list:
        for det in registry:
            print(f"{det.id:34} {det.spec.scope.value:8} {det.spec.description}")
        return EXIT_OK
    report = collect(args, registry)
    out = render(report, args.format)
    sys.stdout.write(out)
    if args.format == "text" and report.errors:
        sys.stderr.write("".join(f"error: {e}\n" for e in report.errors))
    return exit_code(report, Severity(args.fail_on))


def collect(args: argparse.Namespace, registry: Registry) -> Report:
    if args.live:
        if args.rev:
            raise UsageError("--rev reads manifests; it cannot be combined with --live")
        snapshot = _live_snapshot(args, registry)
        files: list[str] = []
        errors: list[ManifestError] = []
    else:
        if not args.path:
            raise UsageError("detect needs a PATH (or --live)")
        from gitmedic.reconciler.config import ConfigError
        from gitmedic.reconciler.manifests.apps import load_apps_desired
        from gitmedic.reconciler.manifests.load import LoadFailure

        try:
            state = load_apps_desired(args.path, rev=args.rev, namespace=args.namespace)
        except (LoadFailure, ConfigError) as exc:
            raise UsageError(str(exc)) from None
        snapshot, files, errors = state.snapshot, state.files, state.errors
    evaluation = run_detectors(registry, snapshot)
    errors += [ManifestError(f"detector:{e.detector}", 0, e.message) for e in evaluation.errors]
    return Report(list(evaluation.findings), errors, registry, snapshot, files)


def _live_snapshot(args: argparse.Namespace, registry: Registry) -> Snapshot:
    """The cluster's state; an optional kind RBAC hides (Secrets) is left out, with a
    warning naming the detectors that ran without it."""
    from gitmedic.reconciler.live import LiveReadError, connect, read_live

    try:
        api = connect(args.context)
        snapshot, denied = read_live(api, namespace=args.namespace, taken_at=_now())
    except LiveReadError as exc:
        raise UsageError(f"cannot read the cluster: {exc}") from None
    for refused in denied:
        sys.stderr.write(f"warning: not allowed: {refused}; {_blind(registry, refused.kind)}\n")
    return snapshot


def _blind(registry: Registry, kind: str) -> str:
    ids = [d.id for d in registry if kind in d.spec.kinds]
    if not ids:
        return f"no detector reads {kind}"
    return f"detectors that read {kind} ran without it: {', '.join(ids)}"


def render(report: Report, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2) + "\n"
    if fmt == "github":
        from gitmedic.bot.annotations import to_annotations

        return to_annotations(report.findings, report.errors, report.snapshot)
    if fmt == "sarif":
        from gitmedic.bot.sarif import to_sarif

        return (
            json.dumps(
                to_sarif(report.findings, report.errors, report.registry, report.snapshot), indent=2
            )
            + "\n"
        )
    from gitmedic.bot.text_report import to_text

    return to_text(report.findings, report.errors, report.snapshot, len(report.files))


def exit_code(report: Report, fail_on: Severity) -> int:
    if report.errors:
        return EXIT_ERROR
    if any(f.severity.rank >= fail_on.rank for f in report.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _registry(ids: list[str]) -> Registry:
    registry = builtin_registry()
    if not ids:
        return registry
    try:
        return registry.select(ids)
    except UnknownDetectorError as exc:
        known = ", ".join(d.id for d in registry)
        raise UsageError(f"{exc}; known detectors: {known}") from None


def _now() -> str:
    """The wall-clock time of a live read, RFC 3339 UTC (the detectors' "now" for ages)."""
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
