"""Desired state: the objects a manifest file, folder or repo (at a revision) declares.

Files come from a :class:`Tree`: the working tree, or a git revision read blob by
blob (``git cat-file --batch``, no checkout), so ``--rev`` never touches the
user's files. Folders holding a ``kustomization.yaml`` are rendered by
``kubectl kustomize`` and their objects are traced back to the resource file
that declared them, so findings still point at a file and line.

A folder is read as the apps it holds (:mod:`.layout`): each kustomize root and chart
rendered once, loose files split by the folders GitOps objects deploy; each app is
evaluated on its own (:attr:`DesiredState.parts`), and one object declared twice in
one app is a warning (:mod:`.variants`), not an error.

In a folder walk, YAML files that hold no Kubernetes object at all (CI configs,
app config files next to the manifests) are skipped; an explicitly named file
must be a manifest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath

from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import CLUSTER_SCOPED, Mode, Obj, Snapshot, Source
from gitmedic.reconciler.config import CONFIG_PATH, ConfigError
from gitmedic.reconciler.manifests.app_charts import configured_chart, tree_config
from gitmedic.reconciler.manifests.chart_sources import allowed_repositories, deployed_charts
from gitmedic.reconciler.manifests.field_lines import FileFields
from gitmedic.reconciler.manifests.flux_substitute import (
    SubstitutedTree,
    substituted_tree,
    unknown_variables,
)
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.helm_render import render_chart
from gitmedic.reconciler.manifests.kube_version import render_version
from gitmedic.reconciler.manifests.kustomize import Rendered, render_kustomization
from gitmedic.reconciler.manifests.kustomize_refs import outside_reach
from gitmedic.reconciler.manifests.layout import (
    MANIFEST_SUFFIXES,
    deployed_folders,
    owner_folder,
    plan,
)
from gitmedic.reconciler.manifests.parse import ManifestError, object_name, parse_text
from gitmedic.reconciler.manifests.render_caps import render_caps
from gitmedic.reconciler.manifests.render_pool import render_each
from gitmedic.reconciler.manifests.schema import (
    KubernetesSchemas,
    schemas_installed,
)
from gitmedic.reconciler.manifests.tree import FsTree, GitTree, LoadFailure, Tree
from gitmedic.reconciler.manifests.variants import Part, loose_apps, settle
from gitmedic.reconciler.redact import register_objects

LINK_REFUSED = (
    "a symbolic link: gitmedic does not follow links in the repository "
    "(commit the file or folder itself)"
)

__all__ = [
    "MANIFEST_SUFFIXES",
    "DesiredState",
    "LoadFailure",
    "ManifestError",
    "load_desired",
    "load_tree",
    "open_tree",
]


@dataclass
class DesiredState:
    snapshot: Snapshot
    errors: list[ManifestError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    kubernetes_version: str | None = None  # the schema objects are validated by (None: newest)
    # the walk's apps when it holds more than one (each is evaluated on its own); else empty
    parts: list[Snapshot] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # what reading found (variants)

    def apps(self) -> list[Snapshot]:
        """The snapshots to evaluate, one per app."""
        return self.parts or [self.snapshot]


def open_tree(path: str | os.PathLike[str], rev: str | None = None) -> tuple[Tree, str]:
    """The tree holding ``path`` and the path's name inside it."""
    p = Path(path)
    _refuse_links_to(p)
    if rev is None:
        if not p.exists():
            raise LoadFailure(f"{path}: no such file or directory")
        return FsTree.around(p, reach=outside_reach)
    return GitTree.at(p, rev)


def _refuse_links_to(path: Path) -> None:
    """A path that is, or goes through, a link inside its repository is refused (links
    above the repository, like a linked ``/tmp``, are the machine's, not the repo's)."""
    link = None
    for part in (path.absolute(), *path.absolute().parents):
        if (part / ".git").exists():
            if link is not None:
                raise LoadFailure(f"{link} is a symbolic link: gitmedic does not follow links")
            return
        link = link or (part if part.is_symlink() else None)


def load_desired(
    path: str | os.PathLike[str],
    *,
    rev: str | None = None,
    namespace: str = "default",
    kubernetes_version: str | None = None,
    helm: Mapping[str, ChartSpec] | None = None,
    deployer: str = "",
) -> DesiredState:
    """``helm``: chart folder -> how its app renders it (values files, release, namespace).
    ``deployer``: the app is this one HelmRelease or Application at ``path``
    (:attr:`~gitmedic.reconciler.config.AppConfig.deployer`): only its chart is rendered."""
    tree, rel = open_tree(path, rev)
    return load_tree(tree, rel, namespace, kubernetes_version, helm, deployer)


def load_tree(
    tree: Tree,
    rel: str,
    namespace: str = "default",
    kubernetes_version: str | None = None,
    helm: Mapping[str, ChartSpec] | None = None,
    deployer: str = "",
) -> DesiredState:
    """The desired state of ``rel`` in ``tree`` (see :func:`load_desired`)."""
    tree = substituted_tree(tree)  # what Flux applies after its build (postBuild)
    state = DesiredState(Snapshot((), mode=Mode.DESIRED, revision=tree.revision))
    state.kubernetes_version = kubernetes_version
    if tree.is_file(rel):
        part = Part(rel)
        _load_file(tree, rel, namespace, part.objects, state, explicit=True)
        parts = [part]
    else:
        parts = _load_dir(tree, rel, namespace, state, helm or {})
    only = frozenset({deployer}) if deployer else _own_deployers(tree, rel, namespace)
    for part in parts:  # a HelmRelease's or Application's chart is its app's
        _load_deployed_charts(tree, part.objects, state, only)
    if deployer and not any(_is_deployer(o, deployer) for part in parts for o in part.objects):
        state.errors.append(ManifestError(rel or ".", 0, _NO_DEPLOYER.format(deployer, rel or ".")))
    if isinstance(tree, SubstitutedTree):
        state.errors.extend(unknown_variables(tree, parts))
    _cap_apps(tree, rel, parts, state)
    settled = settle(parts)
    state.findings.extend(settled.findings)
    # before any text about them leaves; every app's copy (the prod overlay's Secret too)
    register_objects(o.body for objs in settled.parts for o in objs)
    # the schemas of the version asked, else the config's (not the cluster's: a cluster
    # newer than the bundled schemas must not make every object unknown)
    configured = _configured_version(tree)
    schema = KubernetesSchemas(kubernetes_version or configured) if schemas_installed() else None

    def snapshot(objects: list[Obj]) -> Snapshot:
        return Snapshot(objects, mode=Mode.DESIRED, revision=tree.revision, schema=schema)

    state.snapshot = snapshot(settled.objects)
    apps = [objs for objs in settled.parts if objs]
    state.parts = [snapshot(objs) for objs in apps] if len(apps) > 1 else []
    # one deployer seen by two apps is one error
    state.errors = sorted(set(state.errors), key=lambda e: (e.file, e.line, e.message))
    return state


def _cap_apps(tree: Tree, rel: str, parts: list[Part], state: DesiredState) -> None:
    """The object cap per app, all its files and renders together (each render is capped
    on its own as it streams, :mod:`.render_caps`): an app over it is an error and none
    of its objects is judged."""
    limit = render_caps(tree.root).objects
    for part in parts:
        if len(part.objects) > limit:
            where = part.root or rel or "."
            state.errors.append(
                ManifestError(
                    where,
                    0,
                    f"the app at {where} has {len(part.objects):,} objects, more than "
                    f"{limit:,} (manifests.max_rendered_objects): none of them is judged",
                )
            )
            part.objects.clear()


def _load_dir(
    tree: Tree,
    rel: str,
    namespace: str,
    state: DesiredState,
    helm: Mapping[str, ChartSpec],
) -> list[Part]:
    """The apps of a folder (:mod:`.layout`), each rendered once."""
    for link in tree.links(rel):
        state.errors.append(ManifestError(link, 0, LINK_REFUSED))
    files = tree.files(rel)
    layout = plan(tree, files)
    # every kustomize root and chart rendered once, side by side (each is a process)
    specs = [
        (chart, _chart_spec(tree, chart, namespace, state, helm.get(chart)))
        for chart in layout.charts
    ]
    version = _kube_version(tree, state) if layout.charts else None
    jobs: list[Callable[[], Rendered]] = [
        partial(render_kustomization, tree, root) for root in layout.kustomize_roots
    ]
    jobs += [partial(render_chart, tree, spec, version) for _, spec in specs if spec]
    renders = iter(render_each(tree, jobs))
    parts: list[Part] = []
    for root in layout.kustomize_roots:
        rendered = next(renders)
        state.errors.extend(rendered.errors)
        state.files.append(rendered.file)
        objs = [_to_obj(p.body, p.source, namespace) for p in rendered.objects]
        parts.append(Part(root, objs))
    for chart, spec in specs:
        part = Part(chart)
        if spec is not None:
            rendered = next(renders)
            state.errors.extend(rendered.errors)
            state.files.append(rendered.file)
            part.objects.extend(_to_obj(p.body, p.source, spec.namespace) for p in rendered.objects)
        parts.append(part)
    loose: dict[str, list[Obj]] = {}
    for f in layout.loose:
        _load_file(tree, f, namespace, loose.setdefault(f, []), state, explicit=False)
    return _by_deployer(parts, loose, files)


def _by_deployer(parts: list[Part], loose: dict[str, list[Obj]], files: list[str]) -> list[Part]:
    """Loose files a GitOps object deploys (by folder) are that folder's app; the rest
    are one app. A kustomization or chart a GitOps object deploys is marked so."""
    everything = [o for p in parts for o in p.objects]
    everything += [o for objs in loose.values() for o in objs]
    folders = {"" if str(a) == "." else str(a) for f in files for a in PurePosixPath(f).parents}
    deployed = deployed_folders(everything, folders, files)
    for part in parts:
        part.deployed = part.root in deployed
    by_folder: dict[str, Part] = {}
    rest: dict[str, list[Obj]] = {}
    for file, objs in loose.items():
        folder = owner_folder(file, deployed)
        if folder is None:
            rest.setdefault(str(PurePosixPath(file).parent), []).extend(objs)
        else:
            by_folder.setdefault(folder, Part(folder, deployed=True)).objects.extend(objs)
    return [*parts, *by_folder.values(), *loose_apps(rest)]


def _chart_spec(
    tree: Tree, chart: str, namespace: str, state: DesiredState, spec: ChartSpec | None
) -> ChartSpec | None:
    """How a chart renders: with its app's values files, else with its own values.yaml
    alone; None (and the error) when its app's configuration cannot say."""
    if spec is None:
        try:
            spec = configured_chart(tree, chart, namespace)
        except (ConfigError, LoadFailure) as exc:
            state.errors.append(ManifestError(CONFIG_PATH, 0, str(exc)))
            return None
    return spec or ChartSpec(chart, namespace=namespace)


def _own_deployers(tree: Tree, rel: str, namespace: str) -> frozenset[str] | None:
    """The deployers the apps configured at ``rel`` in ``namespace`` name (``deployed_by``):
    a file or overlay holding several releases renders, for one app, only its own (Flux's
    example deploys cert-manager and envoy-gateway from one kustomization). None: every
    deployer (no such app, or one of them names no deployer by name)."""
    try:
        config = tree_config(tree)
    except (ConfigError, LoadFailure):
        return None  # said where the config is read for the apps
    apps = [a for a in config.apps if (a.path, a.namespace) == (rel, namespace)] if config else []
    names = {a.deployed_by.name if a.deployed_by else "" for a in apps}
    return frozenset(names) if names and "" not in names else None


_NO_DEPLOYER = (
    "no HelmRelease or Argo CD Application {} in {}: the app's deployed_by names a "
    "release this path does not deploy, so nothing of it could be rendered"
)


def _is_deployer(obj: Obj, name: str) -> bool:
    return obj.kind in ("HelmRelease", "Application") and obj.name == name


def _load_deployed_charts(
    tree: Tree, objects: list[Obj], state: DesiredState, only: frozenset[str] | None = None
) -> None:
    """The charts that HelmReleases and Applications among ``objects`` take from a repository:
    rendered, or an error saying why not (never a release standing for its chart unseen)."""
    specs, errors = deployed_charts(tree, objects, allowed_repositories(tree.root), only)
    state.errors.extend(errors)
    for spec in specs:
        rendered = render_chart(tree, spec, _kube_version(tree, state))
        state.errors.extend(rendered.errors)
        objects.extend(_to_obj(p.body, p.source, spec.namespace) for p in rendered.objects)


def _kube_version(tree: Tree, state: DesiredState) -> str:
    """What charts render for: asked, else the live cluster's, else the config's."""
    return render_version(state.kubernetes_version, _configured_version(tree))


def _configured_version(tree: Tree) -> str | None:
    try:
        config = tree_config(tree)
    except (ConfigError, LoadFailure):
        return None  # said where the config is read for the apps
    return config.kubernetes_version if config else None


def _load_file(
    tree: Tree,
    rel: str,
    namespace: str,
    objects: list[Obj],
    state: DesiredState,
    *,
    explicit: bool,
) -> None:
    try:
        text = tree.read_text(rel)
    except LoadFailure as exc:
        state.errors.append(ManifestError(rel, exc.line, str(exc)))
        return
    parsed = parse_text(text, rel)
    if not explicit and parsed.foreign:
        state.skipped.append(rel)
        return
    state.files.append(rel)
    state.errors.extend(parsed.errors)
    located = FileFields(text)  # each finding's field line, found when asked
    objects.extend(
        _to_obj(p.body, Source(rel, p.line, p.document, fields=located.at(p.line)), namespace)
        for p in parsed.objects
    )


def _to_obj(body: dict[str, object], source: Source | None, namespace: str) -> Obj:
    meta = body["metadata"]
    assert isinstance(meta, dict)
    kind = str(body["kind"])
    ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or namespace)
    if ns and meta.get("namespace") != ns:
        body = {**body, "metadata": {**meta, "namespace": ns}}
    ref = Resource(kind, ns, object_name(meta), str(body["apiVersion"]))
    return Obj(ref, body, source)
