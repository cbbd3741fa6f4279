"""``gitmedic detect``: desired-state (or live) detection, rendered for people or machines."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.common.exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Resource, Severity, sort_findings
from gitmedic.detectors.location import finding_location
from gitmedic.detectors.registry import Registry, UnknownDetectorError
from gitmedic.detectors.runner import DetectorError, run_detectors
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.manifests.parse import ManifestError

if TYPE_CHECKING:
    from gitmedic.reconciler.config import Config
    from gitmedic.reconciler.manifests.load import DesiredState


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
            "findings": [self._finding_json(f) for f in self.findings],
            "errors": [e.to_json() for e in self.errors],
        }

    def _finding_json(self, finding: Finding) -> dict[str, object]:
        """The finding's shape, with the file and line of its field (null: none, live)."""
        where = finding_location(self.snapshot, finding)
        return {
            **finding.to_json(),
            "file": where.file if where else None,
            "line": where.line if where and where.line else None,
        }


def run_detect(args: argparse.Namespace) -> int:
    if args.list:
        detectors = _learned(Path(args.path)) if args.path else None
        for det in _registry(args.detector, None, detectors, args.exclude):
            print(f"{det.id:34} {det.spec.scope.value:8} {det.spec.description}")
        return EXIT_OK
    from gitmedic.reconciler.manifests.tree import one_toplevel_per_folder

    with _without_cyclic_gc(), one_toplevel_per_folder():
        report = collect(args)
    if args.write_baseline:
        return _write_baseline(report, Path(args.write_baseline))
    note = _apply_baseline(report, args.baseline) if args.baseline else ""
    out = render(report, args.format)
    sys.stdout.write(out)
    _write_extra_outputs(report, args)
    if args.format == "text" and report.errors:
        sys.stderr.write("".join(f"error: {e}\n" for e in report.errors))
    if note and args.format == "text":
        sys.stderr.write(note)
    return exit_code(report, Severity(args.fail_on))


def _write_extra_outputs(report: Report, args: argparse.Namespace) -> None:
    """``--sarif FILE`` and ``--summary FILE``: other views of the same report, so a CI
    step reads and judges the manifests once for annotations, code scanning and summary."""
    from gitmedic.reconciler.redact import redact_text

    # Files leave the process as stdout does: redacted line by line (ScrubbingStream).
    if args.sarif:
        sarif = render(report, "sarif")
        Path(args.sarif).write_text("".join(map(redact_text, sarif.splitlines(keepends=True))))
    if args.summary:
        from gitmedic.bot.render.step_summary import to_summary

        text = to_summary(report.findings, report.errors, report.snapshot, len(report.files))
        with Path(args.summary).open("a", encoding="utf-8") as out:
            out.write("".join(map(redact_text, text.splitlines(keepends=True))))


@contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Reading and judging the manifests with Python's cycle collector paused.

    Loading 10,000 objects allocates about a million dicts, lists and strings, all kept
    until the end and none in a cycle; every full collection on the way walks all of
    them again, a fifth of detect's CPU on such a stream. Reference counting still frees
    what is dropped; the collector resumes afterwards, with what was read frozen (out of
    its reach): re-enabled over a million young objects, its first full collection walked
    them all once more, a tenth of a second for output that allocates little.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def collect(args: argparse.Namespace) -> Report:
    found: list[Finding] = []  # what reading found (variants of one object)
    if args.live:
        if args.rev:
            raise UsageError("--rev reads manifests; it cannot be combined with --live")
        registry = _registry(args.detector, None, exclude=args.exclude)
        snapshot = _live_snapshot(args, registry)
        files: list[str] = []
        errors: list[ManifestError] = []
        apps = [snapshot]
    else:
        if not args.path:
            raise UsageError("detect needs a PATH (or --live)")
        (state, parts), config = _desired(args)
        snapshot, files, errors = state.snapshot, state.files, state.errors
        registry = _registry(args.detector, config, _learned(Path(args.path)), args.exclude)
        # each configured app on its own, and inside one the walk's apps (its overlays)
        found = [f for part in parts for f in part.findings if f.detector in registry]
        apps = [app for part in parts for app in part.apps()]
    findings, detector_errors, snapshot = _evaluate(registry, apps, snapshot)
    errors += detector_errors
    return Report(sort_findings(_unique([*found, *findings])), errors, registry, snapshot, files)


def _evaluate(
    registry: Registry, apps: list[Snapshot], whole: Snapshot
) -> tuple[list[Finding], list[ManifestError], Snapshot]:
    """Each app of the walk on its own (the dev and prod overlays of one base are two),
    and the snapshot that locates the findings (see :func:`_locating`)."""
    findings: list[Finding] = []
    errors: list[ManifestError] = []
    owners: dict[Resource, Snapshot] = {}
    for snapshot in apps:
        evaluation = run_detectors(registry, snapshot)
        findings.extend(evaluation.findings)
        for f in evaluation.findings:
            owners.setdefault(f.resource, snapshot)
        for failed in evaluation.errors:
            error = _failure(failed)
            if error not in errors:
                errors.append(error)
    return findings, errors, _locating(whole, apps, owners) if len(apps) > 1 else whole


def _locating(whole: Snapshot, apps: list[Snapshot], owners: dict[Resource, Snapshot]) -> Snapshot:
    """The walk's objects, each identity taken from the app that found something about it:
    a chart's and a kustomization's Deployment of one name are two objects, and the
    chart's finding points at the chart's file."""
    chosen: dict[Resource, Obj] = {}
    for app in apps:
        for obj in app:
            owner = owners.get(obj.ref)
            if owner is None or owner is app:
                chosen.setdefault(obj.ref, obj)
    return Snapshot(chosen.values(), mode=whole.mode, revision=whole.revision, schema=whole.schema)


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per fingerprint: a base's object in two overlays of one namespace."""
    return list({f.fingerprint: f for f in reversed(findings)}.values())[::-1]


def _failure(error: DetectorError) -> ManifestError:
    """A detector that raised: exit 2 naming it (its findings are unknown, not none)."""
    if error.detector in {d.id for d in builtin_registry()}:
        what = f"built-in detector {error.detector} failed (a bug in gitmedic: please report it)"
    else:
        what = f"learned rule {error.detector} failed"
    return ManifestError(f"detector:{error.detector}", 0, f"{what}: {error.message}")


def _desired(
    args: argparse.Namespace,
) -> tuple[tuple[DesiredState, list[DesiredState]], Config | None]:
    from gitmedic.reconciler.config import ConfigError
    from gitmedic.reconciler.manifests.apps import load_apps_each, repo_config
    from gitmedic.reconciler.manifests.helm_render import origins_on_demand
    from gitmedic.reconciler.manifests.load import LoadFailure
    from gitmedic.reconciler.manifests.schema import (
        SchemaVersionError,
        resolve_version,
        schemas_installed,
    )

    if not schemas_installed():  # a core install: said, not silently skipped
        sys.stderr.write(
            "note: no schema validation: the Kubernetes schemas come with "
            "pip install 'gitmedic[kube]'\n"
        )
    try:
        if args.kubernetes_version and schemas_installed():
            resolve_version(args.kubernetes_version)
        config = repo_config(args.path)
        with origins_on_demand():  # read once, then exit: the values lines only if needed
            state = load_apps_each(
                args.path,
                rev=args.rev,
                namespace=args.namespace,
                kubernetes_version=args.kubernetes_version,
                app=getattr(args, "app", None),
            )
    except (LoadFailure, ConfigError, SchemaVersionError) as exc:
        raise UsageError(str(exc)) from None
    return state, config


def _write_baseline(report: Report, path: Path) -> int:
    from gitmedic.bot.cli.baseline import BaselineError, write_baseline

    if report.errors:
        sys.stderr.write("".join(f"error: {e}\n" for e in report.errors))
        raise UsageError(f"not writing {path}: the manifests have errors")
    try:
        count = write_baseline(path, report.findings)
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    sys.stderr.write(f"wrote {count} accepted finding{'s' * (count != 1)} to {path}\n")
    return EXIT_OK


def _apply_baseline(report: Report, file: str) -> str:
    from gitmedic.bot.cli.baseline import BaselineError, apply_baseline, read_baseline

    try:
        accepted = read_baseline(Path(file))
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    filtered = apply_baseline(report.findings, accepted)
    report.findings = filtered.new
    stale = f"; {filtered.stale} no longer found (prune them)" if filtered.stale else ""
    return f"baseline {file}: {filtered.accepted} accepted finding(s) not shown{stale}\n"


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
        from gitmedic.bot.render.annotations import to_annotations

        return to_annotations(report.findings, report.errors, report.snapshot)
    if fmt == "sarif":
        from gitmedic.bot.render.sarif import to_sarif

        return (
            json.dumps(
                to_sarif(report.findings, report.errors, report.registry, report.snapshot), indent=2
            )
            + "\n"
        )
    from gitmedic.bot.render.text_report import to_text

    return to_text(report.findings, report.errors, report.snapshot, len(report.files))


def exit_code(report: Report, fail_on: Severity) -> int:
    if report.errors:
        return EXIT_ERROR
    if any(f.severity.rank >= fail_on.rank for f in report.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _learned(path: Path) -> list[Detector]:
    """The built-ins with the repo's learned rules (``.gitmedic/rules``), as ``run`` runs them.

    A rule that does not load is said on stderr and not run (``gitmedic memory check``
    fails on it); running rules needs the CEL engine of the ``[rules]`` extra, and a
    core install says so (exit 2) rather than skip what the bot learned.
    """
    from gitmedic.bot.memory.learned import load_learned, rule_files
    from gitmedic.reconciler.manifests.apps import repo_root

    root = repo_root(path.absolute())
    if not rule_files(root):
        return list(builtin_registry())
    learned = load_learned(root, builtin_registry())
    for refused in learned.refused:
        sys.stderr.write(f"warning: learned rule not run: {refused}\n")
    return list(learned.registry)


def _registry(
    ids: list[str],
    config: Config | None,
    detectors: list[Detector] | None = None,
    exclude: Sequence[str] = (),
) -> Registry:
    """``--detector`` when given, else the config's include/exclude, else every detector;
    less ``--exclude`` in every case."""
    chosen = _chosen(ids, config, detectors)
    unknown = sorted(set(exclude) - {d.id for d in chosen})
    if unknown:
        known = ", ".join(d.id for d in chosen)
        raise UsageError(f"--exclude: unknown detector {', '.join(unknown)}; known: {known}")
    return chosen.select(d.id for d in chosen if d.id not in exclude) if exclude else chosen


def _chosen(ids: list[str], config: Config | None, detectors: list[Detector] | None) -> Registry:
    registry = builtin_registry() if detectors is None else Registry(detectors)
    for check in _reader_checks():
        if check.id not in registry:
            registry.register(check)
    try:
        if ids:
            return registry.select(ids)
        if config is not None:
            from gitmedic.reconciler.config import ConfigError

            try:
                return registry.select(config.detectors.chosen([d.id for d in registry]))
            except ConfigError as exc:
                raise UsageError(str(exc)) from None
    except UnknownDetectorError as exc:
        known = ", ".join(d.id for d in registry)
        raise UsageError(f"{exc}; known detectors: {known}") from None
    return registry


def _reader_checks() -> list[Detector]:
    """Checks made while reading (one object declared twice in an app): listed, selectable
    with --detector and described in SARIF like the detectors; their findings come from
    the loader, so over a snapshot they find nothing."""
    from gitmedic.reconciler.manifests.variants import SPEC as VARIANTS

    def from_reading(snapshot: Snapshot) -> list[Finding]:
        del snapshot
        return []

    return [Detector(VARIANTS, from_reading)]


def _now() -> str:
    """The wall-clock time of a live read, RFC 3339 UTC (the detectors' "now" for ages)."""
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
