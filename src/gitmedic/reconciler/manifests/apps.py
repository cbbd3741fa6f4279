"""Desired state of a repo's configured apps: each app's folder with its own namespace.

A repo with ``.gitmedic/config.yaml`` takes its applications, paths and
namespaces from it; a PATH inside (or above) an app's folder is read with that
app's namespace. Without a config, or for a PATH no app covers, PATH is one
application in ``--namespace`` (default ``default``).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from gitmedic.detectors.snapshot import Mode, Snapshot
from gitmedic.reconciler.config import AppConfig, find_config, load_config
from gitmedic.reconciler.manifests.duplicates import unique_objects
from gitmedic.reconciler.manifests.load import DesiredState, load_desired
from gitmedic.reconciler.manifests.tree import git_toplevel


def load_apps_desired(
    path: str | Path, *, rev: str | None = None, namespace: str | None = None
) -> DesiredState:
    path = Path(path).absolute()
    root = git_toplevel(path) or (path if path.is_dir() else path.parent)
    config_file = find_config(root)
    default_ns = namespace or "default"
    if config_file is None:
        return load_desired(path, rev=rev, namespace=default_ns)
    rel = PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    apps = load_config(config_file).apps
    chosen = [(app, part) for app in apps if (part := _overlap(app, rel))]
    if not chosen:
        return load_desired(path, rev=rev, namespace=default_ns)
    states = [
        load_desired(root / part, rev=rev, namespace=namespace or app.namespace)
        for app, part in chosen
    ]
    return _merge(states)


def _overlap(app: AppConfig, rel: PurePosixPath) -> str:
    """The part of ``app`` that ``rel`` covers, as a repo-relative path, or ''."""
    app_path = PurePosixPath(app.path)
    if str(rel) in ("", ".") or app_path.is_relative_to(rel):
        return str(app_path)
    if rel.is_relative_to(app_path):
        return str(rel)
    return ""


def _merge(states: list[DesiredState]) -> DesiredState:
    # Two apps whose folders overlap declare the same objects: they are counted once.
    objects, repeats = unique_objects(o for s in states for o in s.snapshot)
    merged = DesiredState(
        Snapshot(objects, mode=Mode.DESIRED, revision=states[0].snapshot.revision), repeats
    )
    for s in states:
        merged.errors.extend(s.errors)
        merged.files.extend(s.files)
        merged.skipped.extend(s.skipped)
    merged.errors.sort(key=lambda e: (e.file, e.line))
    return merged
