"""Desired state of a repo's configured apps: each app's folder with its own namespace.

A repo with ``.gitmedic/config.yaml`` takes its applications, paths and
namespaces from it; a PATH inside (or above) an app's folder is read with that
app's namespace. ``--namespace`` picks, of the apps PATH covers, the ones in that
namespace (the prod environment of a chart that staging renders too); when none
is, every app PATH covers is read into it. Without a config, or for a PATH no
app covers, PATH is one application in ``--namespace`` (default ``default``).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Mode, Snapshot
from gitmedic.reconciler.config import CONFIG_PATH, AppConfig, Config, ConfigError, find_config
from gitmedic.reconciler.manifests.app_charts import chart_spec
from gitmedic.reconciler.manifests.config_file import load_config
from gitmedic.reconciler.manifests.duplicates import object_key, unique_objects
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.load import DesiredState, load_desired
from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.shared_namespace import Collision, collisions, overlapping
from gitmedic.reconciler.manifests.tree import git_toplevel


def repo_config(path: str | Path) -> Config | None:
    """The configuration of the repo holding ``path``, or None when it has none."""
    config_file = find_config(repo_root(Path(path).absolute()))
    return load_config(config_file) if config_file else None


def repo_root(path: Path) -> Path:
    return git_toplevel(path) or (path if path.is_dir() else path.parent)


def load_apps_desired(
    path: str | Path,
    *,
    rev: str | None = None,
    namespace: str | None = None,
    kubernetes_version: str | None = None,
) -> DesiredState:
    """``kubernetes_version``: the version asked for (``--kubernetes-version``); the config's
    is the loader's to read (:mod:`.kube_version`: charts render for the live cluster's
    before it, so it is never passed on as if it were asked)."""
    merged, _ = load_apps_each(
        path, rev=rev, namespace=namespace, kubernetes_version=kubernetes_version
    )
    return merged


def load_apps_each(
    path: str | Path,
    *,
    rev: str | None = None,
    namespace: str | None = None,
    kubernetes_version: str | None = None,
    app: str | None = None,
) -> tuple[DesiredState, list[DesiredState]]:
    """The apps PATH covers merged (for reporting), and each app's own state: detectors
    evaluate each app on its own, so one object two environments render (a base both
    overlays include, a cluster-scoped object) is no "defined twice" and each copy is
    judged with its own app's objects. ``app``: only the app of that name (ConfigError
    when the config has none, or PATH does not cover it)."""
    path = Path(path).absolute()
    root = repo_root(path)
    config_file = find_config(root)
    default_ns = namespace or "default"
    if app is not None and config_file is None:
        raise ConfigError(f"--app {app}: {root} has no {CONFIG_PATH} naming apps")
    if config_file is None:
        alone = load_desired(
            path, rev=rev, namespace=default_ns, kubernetes_version=kubernetes_version
        )
        return alone, [alone]
    rel = PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    config = load_config(config_file)
    chosen = [(a, part) for a in config.apps if (part := _overlap(a, rel))]
    if app is not None:
        chosen = _named(config, chosen, app, str(rel))
    if any(a.namespace == namespace for a, _ in chosen):
        # the environment of that namespace, not every app of the path forced into it (two
        # environments of one chart would then render the same objects twice)
        chosen = [(a, part) for a, part in chosen if a.namespace == namespace]
    if not chosen:
        alone = load_desired(
            path, rev=rev, namespace=default_ns, kubernetes_version=kubernetes_version
        )
        return alone, [alone]
    states = [
        load_desired(
            root / part,
            rev=rev,
            namespace=namespace or a.namespace,
            kubernetes_version=kubernetes_version,
            helm=_chart(a, namespace or a.namespace),
            deployer=a.deployer,
        )
        for a, part in chosen
    ]
    apps = [a for a, _ in chosen]
    merged = _merge(states, _collisions(apps, states, namespace), [a.path for a in apps])
    return merged, states


def _named(
    config: Config, chosen: list[tuple[AppConfig, str]], name: str, rel: str
) -> list[tuple[AppConfig, str]]:
    """The one app ``--app`` names, of those PATH covers."""
    named = [(a, part) for a, part in chosen if a.name == name]
    if named:
        return named
    if any(a.name == name for a in config.apps):
        raise ConfigError(f"--app {name}: the app is not under {rel or '.'}")
    known = ", ".join(a.name for a in config.apps)
    raise ConfigError(f"--app {name}: {CONFIG_PATH} has no such app (its apps: {known})")


def _chart(app: AppConfig, namespace: str) -> dict[str, ChartSpec]:
    spec = chart_spec(app, namespace)
    return {app.path: spec} if spec else {}


def _overlap(app: AppConfig, rel: PurePosixPath) -> str:
    """The part of ``app`` that ``rel`` covers, as a repo-relative path, or ''."""
    app_path = PurePosixPath(app.path)
    if str(rel) in ("", ".") or app_path.is_relative_to(rel):
        return str(app_path)
    if rel.is_relative_to(app_path):
        return str(rel)
    return ""


def _collisions(
    apps: list[AppConfig], states: list[DesiredState], namespace: str | None
) -> list[Collision]:
    """Apps of one namespace rendering the same object (not when ``--namespace`` reads
    apps of several namespaces into one: that is the reader's choice, not the config's)."""
    if namespace is not None and any(a.namespace != namespace for a in apps):
        return []
    return collisions(apps, [list(s.snapshot) for s in states])


def _merge(states: list[DesiredState], clashes: list[Collision], paths: list[str]) -> DesiredState:
    # Two apps whose folders overlap declare the same objects: they are counted once, and
    # each repeat said. Two apps of one namespace rendering one object are one config
    # error, not one per object. Two apps apart (two overlays of one base, one
    # cluster-scoped object each renders) are each judged on its own: no repeat there.
    again = {r for c in clashes for r in c.objects}
    seen: set[Resource] = set()
    first: dict[tuple[str, str, str, str], int] = {}
    kept = []
    for index, state in enumerate(states):
        for o in state.snapshot:
            if o.ref in again and o.ref in seen:
                continue
            seen.add(o.ref)
            owner = first.setdefault(object_key(o), index)
            if owner != index and not overlapping(paths[owner], paths[index]):
                continue
            kept.append(o)
    objects, repeats = unique_objects(kept)
    errors = [*(ManifestError(CONFIG_PATH, 0, c.message()) for c in clashes), *repeats]
    merged = DesiredState(
        Snapshot(
            objects,
            mode=Mode.DESIRED,
            revision=states[0].snapshot.revision,
            schema=states[0].snapshot.schema,
        ),
        errors,
    )
    for s in states:
        # two environments of one chart fail to render for the same reason: say it once
        merged.errors.extend(e for e in s.errors if e not in merged.errors)
        merged.findings.extend(f for f in s.findings if f not in merged.findings)
        merged.files.extend(s.files)
        merged.skipped.extend(s.skipped)
    merged.errors.sort(key=lambda e: (e.file, e.line))
    return merged
