"""The charts a folder's deployers take from repositories, and the repositories they may.

A Flux HelmRelease whose chart comes from a ``HelmRepository`` (or a ``chartRef``
to an ``OCIRepository``) and an Argo CD Application whose source is a ``chart:``
from a ``repoURL`` deploy objects that no file of the repository holds. The
loader renders them (:func:`deployed_charts`) instead of reporting the deployer
alone, which would read as a healthy app of three objects.

A chart is pulled only from a repository the manifests declare:

- a Flux source object named by the release's ``sourceRef``/``chartRef``, among
  the objects being loaded, else anywhere in the repository (at the revision
  read);
- an Argo CD Application's own ``repoURL``;
- else an entry of ``manifests.chart_repositories`` in the **work tree's**
  ``.gitmedic/config.yaml`` (read from the file system, never from the revision
  under test, so a pull request cannot allow a repository for itself).

A release whose source nothing declares is an error naming it. No URL is ever
taken from anywhere else (values, annotations, a chart's own metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.config import CONFIG_PATH, ChartRepository, ConfigError
from gitmedic.reconciler.manifests.chart_pull import RemoteChart
from gitmedic.reconciler.manifests.deployed_by import (
    ChartSource,
    Deployed,
    DeployerError,
    read_deployer,
)
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure, Tree

__all__ = ["allowed_repositories", "deployed_charts"]

FLUX_SOURCES = "source.toolkit.fluxcd.io"
ALLOW_HINT = (
    "declare it in the repository, or allow it in the work tree's .gitmedic/config.yaml "
    "(manifests: {chart_repositories: [{url: ..., name: ..., namespace: ...}]})"
)
_allowed: dict[Path, tuple[tuple[int, int], tuple[ChartRepository, ...]]] = {}


def allowed_repositories(root: Path) -> tuple[ChartRepository, ...]:
    """``manifests.chart_repositories`` of the work tree's config (none without one)."""
    from gitmedic.reconciler.manifests.config_file import load_config

    path = root / CONFIG_PATH
    try:
        st = path.lstat()
    except OSError:
        return ()
    key = (st.st_mtime_ns, st.st_size)
    cached = _allowed.get(path)
    if cached is None or cached[0] != key:
        try:
            repos = load_config(path).manifests.chart_repositories
        except ConfigError:
            repos = ()  # an invalid config allows nothing; detect says why
        cached = _allowed[path] = (key, repos)
    return cached[1]


def deployed_charts(
    tree: Tree,
    objects: Sequence[Obj],
    allowed: Sequence[ChartRepository] = (),
    only: frozenset[str] | None = None,
) -> tuple[list[ChartSpec], list[ManifestError]]:
    """How each deployer among ``objects`` renders its chart from a repository (``only``:
    the deployers of these names, the app's own; None: all)."""
    specs: list[ChartSpec] = []
    errors: list[ManifestError] = []
    for obj in objects:
        if obj.source is None or not _takes_remote_chart(obj):
            continue
        if only is not None and obj.ref.name not in only:
            continue  # another app's release in the same file or overlay
        where = (obj.source.file, obj.source.line)
        try:
            deployed = read_deployer(_reader(tree), _deployer_file(obj), obj.ref.name)
            if deployed.remote is None:
                continue
            if "${" in deployed.remote.version:  # left as written: its source is unread
                raise DeployerError(
                    f"chart {deployed.remote.chart} version {deployed.remote.version} is a "
                    "Flux postBuild variable gitmedic could not read: not pulled"
                )
            remote = _resolve(deployed.remote, obj, objects, tree, allowed)
        except (DeployerError, LoadFailure) as exc:
            errors.append(ManifestError(*where, str(exc)))
            continue
        specs.append(_spec(deployed, remote, obj))
    return specs, errors


def undeclared_source(root: Path, source: ChartSource, namespace: str) -> str:
    """Why a release's chart could never be pulled: its Flux source object is declared
    nowhere in the repository at ``root`` nor allowed by the work tree's config ('' when
    it is, or when the deployer names the URL itself, as Argo CD does)."""
    if source.url:
        return ""
    namespace = source.namespace or namespace
    body, _ = _declared(source.kind, source.name, namespace, (), FsTree(root))
    allowed = allowed_repositories(root)
    if body is not None or any(
        a.name == source.name and a.namespace in ("", namespace) for a in allowed
    ):
        return ""
    chart = f"chart '{source.chart}' " if source.chart else "its chart "
    return (
        f"takes {chart}from a {source.kind} source ({namespace}/{source.name}) that no "
        f"manifest of this repository declares: {ALLOW_HINT}"
    )


def _spec(deployed: Deployed, remote: RemoteChart, obj: Obj) -> ChartSpec:
    assert deployed.remote is not None
    namespace = deployed.namespace or obj.ref.namespace or "default"
    return ChartSpec(
        deployed.remote.file, (), deployed.release, namespace, deployed.sources, remote
    )


def _takes_remote_chart(obj: Obj) -> bool:
    group = obj.ref.api_version.split("/")[0]
    spec = _map(obj.body.get("spec"))
    if (group, obj.kind) == ("helm.toolkit.fluxcd.io", "HelmRelease"):
        ref = _map(_map(_map(spec.get("chart")).get("spec")).get("sourceRef"))
        return bool(spec.get("chartRef")) or ref.get("kind") not in (None, "GitRepository")
    if (group, obj.kind) == ("argoproj.io", "Application"):
        sources = [_map(s) for s in spec.get("sources") or []] or [_map(spec.get("source"))]
        return not any(s.get("path") for s in sources) and any(s.get("chart") for s in sources)
    return False


def _deployer_file(obj: Obj) -> str:
    """The overlay that renders a kustomized HelmRelease (its patches hold values), else
    the file declaring the object."""
    assert obj.source is not None
    if obj.source.renderer == "kustomize" and obj.kind == "HelmRelease":
        return obj.source.render_root
    return obj.source.file


def _reader(tree: Tree) -> Any:
    def read(rel: str) -> str:
        try:
            return tree.read_text(rel)
        except LoadFailure as exc:
            raise OSError(str(exc)) from None

    return read


def _resolve(
    source: ChartSource,
    obj: Obj,
    objects: Sequence[Obj],
    tree: Tree,
    allowed: Sequence[ChartRepository],
) -> RemoteChart:
    urls = tuple(a.url for a in allowed)
    if source.url:  # an Argo CD Application names its repository itself
        return RemoteChart(source.url, source.chart, source.version, source.file, allowed=urls)
    namespace = source.namespace or obj.ref.namespace
    body, declared = _declared(source.kind, source.name, namespace, objects, tree)
    if body is None:
        return _allowed_source(source, namespace, obj, allowed)
    spec = _map(body.get("spec"))
    url, insecure = str(spec.get("url") or ""), bool(spec.get("insecure"))
    if source.kind == "OCIRepository":
        return _oci_source(source, spec, url, declared, urls)
    return RemoteChart(url, source.chart, source.version, declared, insecure, urls)


def _oci_source(
    source: ChartSource, spec: dict[str, Any], url: str, declared: str, urls: tuple[str, ...]
) -> RemoteChart:
    """A Flux OCIRepository names the chart in its URL and the version in ``spec.ref``."""
    ref = _map(spec.get("ref"))
    if ref.get("digest"):
        raise DeployerError(
            f"{declared}: OCIRepository {source.name} pins a digest; gitmedic pulls charts by "
            "tag or semver (ref.tag, ref.semver)"
        )
    repository, _, chart = url.rstrip("/").rpartition("/")
    version = str(ref.get("semver") or ref.get("tag") or "")
    return RemoteChart(
        repository, chart, version, declared, bool(spec.get("insecure")), allowed=urls
    )


def _allowed_source(
    source: ChartSource, namespace: str, obj: Obj, allowed: Sequence[ChartRepository]
) -> RemoteChart:
    urls = tuple(a.url for a in allowed)
    for entry in allowed:
        if entry.name == source.name and entry.namespace in ("", namespace):
            where = f"{CONFIG_PATH} (manifests.chart_repositories)"
            return RemoteChart(entry.url, source.chart, source.version, where, allowed=urls)
    chart = f"chart {source.chart} " if source.chart else "its chart "
    raise DeployerError(
        f"{obj.kind} {obj.ref.name} takes {chart}from {source.kind} {namespace}/{source.name}, "
        f"which no manifest of this repository declares; gitmedic pulls charts only from "
        f"repositories the repository declares: {ALLOW_HINT}"
    )


def _declared(
    kind: str, name: str, namespace: str, objects: Sequence[Obj], tree: Tree
) -> tuple[dict[str, Any] | None, str]:
    """The Flux source object and the file declaring it: among the loaded objects, else
    in any YAML file of the repository."""
    for o in objects:
        if _is_source(o.body, kind, name, namespace, o.ref.namespace):
            return dict(o.body), o.source.file if o.source else ""
    for file in tree.files(""):
        if not file.endswith((".yaml", ".yml")):
            continue
        found = _in_file(tree, file, kind, name, namespace)
        if found is not None:
            return found, file
    return None, ""


def _in_file(tree: Tree, file: str, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        text = tree.read_text(file)
    except LoadFailure:
        return None
    if f"kind: {kind}" not in text or name not in text:
        return None
    try:
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return None
    return next((d for d in docs if _is_source(d, kind, name, namespace, "")), None)


def _is_source(body: Any, kind: str, name: str, namespace: str, placed: str) -> bool:
    if not isinstance(body, dict) or body.get("kind") != kind:
        return False
    if not str(body.get("apiVersion", "")).startswith(f"{FLUX_SOURCES}/"):
        return False
    meta = _map(body.get("metadata"))
    own = str(meta.get("namespace") or placed)
    return meta.get("name") == name and (not own or not namespace or own == namespace)


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
