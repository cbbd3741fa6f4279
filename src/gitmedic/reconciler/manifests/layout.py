"""Which parts of a walked folder are applications of their own (whole-repo detection).

A repository holds several applications side by side: kustomize overlays of one
base (dev, staging, prod), Helm charts, and plain folders that an Argo CD
Application or a Flux Kustomization deploys. Each renders once and is evaluated on
its own: the Deployment of a base is one deployment in the dev overlay and another
in the prod overlay, never "one object defined twice". The layout of a folder:

- **kustomize roots**: folders with a kustomization that is neither inside another
  kustomization's folder nor included (``resources``, ``bases``, ``components``...)
  by another kustomization of the walk. A base its overlays include renders with
  each of them, not alone, and its files are not read again as loose files;
- **charts**: folders with a ``Chart.yaml`` outside every kustomization folder and
  every other chart (a subchart renders with its parent);
- **loose files**: every other manifest file, except the ones a kustomization names.

:func:`deployed_folders` then finds, among the objects read, the folders a GitOps
object deploys (a Flux ``Kustomization``'s ``spec.path``, an Argo CD
``Application``'s source ``path``): the loose files under such a folder are that
app's, the rest form one app of their own. A folder ``flux bootstrap`` syncs (its
``flux-system/gotk-*.yaml``) is deployed too: the cluster holds its Kustomization.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.manifests.kustomize_refs import (
    KUSTOMIZATION_FILES,
    is_component,
    local_references,
)
from gitmedic.reconciler.manifests.tree import Tree

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_BOOTSTRAP_FILES = frozenset({"gotk-components.yaml", "gotk-sync.yaml"})
_FLUX_KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "Kustomization")
_ELSEWHERE_KINDS = frozenset({"OCIRepository", "Bucket", "HelmRepository"})
__all__ = ["Layout", "deployed_folders", "inside", "plan"]


@dataclass(frozen=True)
class Layout:
    kustomize_roots: list[str]
    charts: list[str]
    loose: list[str]  # manifest files that belong to no kustomization and no chart


def plan(tree: Tree, files: list[str]) -> Layout:
    """The apps among ``files`` (a folder's walk, repository paths)."""
    folders = sorted({_parent(f) for f in files if PurePosixPath(f).name in KUSTOMIZATION_FILES})
    nested = {k for k in folders if any(inside(k, o) for o in folders if o != k)}
    named = {t for k in folders for t in local_references(tree, k)}
    roots = [k for k in folders if k not in nested and k not in named and not is_component(tree, k)]
    charts = _charts(files, folders)
    loose = [
        f
        for f in files
        if f.endswith(MANIFEST_SUFFIXES)
        and f not in named
        and not any(inside(f, k) for k in folders)
        and not any(inside(f, c) for c in charts)  # templates are not YAML until rendered
    ]
    return Layout(roots, charts, loose)


def _charts(files: list[str], kustomize_folders: list[str]) -> list[str]:
    found = {_parent(f) for f in files if PurePosixPath(f).name == "Chart.yaml"}
    return sorted(
        c
        for c in found
        if not any(inside(c, k) for k in kustomize_folders)
        and not any(inside(c, o) for o in found if o != c)
    )


def deployed_folders(
    objects: Iterable[Obj], folders: Iterable[str], files: Iterable[str] = ()
) -> dict[str, bool]:
    """Of ``folders`` (repository paths that exist), those a GitOps object among
    ``objects`` deploys, each with whether its subfolders are deployed too (Flux: always;
    Argo CD: with ``directory.recurse``), and the folders ``flux bootstrap`` made a
    cluster's root of (among ``files``)."""
    known = set(folders)
    out: dict[str, bool] = dict.fromkeys(bootstrap_paths(files), True)
    objects = list(objects)
    elsewhere = _other_checkouts(objects)
    for obj in objects:
        if _flux_source_elsewhere(obj, elsewhere):
            continue  # its path is a folder of another artifact, not of this walk
        for path, recurse in _deploys(obj):
            folder = _normal(path)
            if folder is not None and folder in known:
                out[folder] = out.get(folder, False) or recurse
    return out


def bootstrap_paths(files: Iterable[str]) -> list[str]:
    """The folders ``flux bootstrap --path`` syncs: each holds a ``flux-system`` folder
    with the ``gotk-components.yaml``/``gotk-sync.yaml`` bootstrap writes. The
    Kustomization syncing it lives in the cluster (repositories often keep
    ``gotk-sync.yaml`` as a placeholder), so no object of the walk deploys the folder,
    yet each such folder is one cluster's desired state: ``clusters/staging`` and
    ``clusters/production`` are never applied together."""
    out = set()
    for file in files:
        path = PurePosixPath(file)
        if path.name in _BOOTSTRAP_FILES and path.parent.name == "flux-system":
            out.add(_parent(str(path.parent)))
    return sorted(out)


def _flux_source_elsewhere(obj: Obj, elsewhere: set[tuple[str, str]]) -> bool:
    """A Flux Kustomization whose source is not this repository: an OCI artifact, a
    bucket, or a GitRepository of another repository or branch (kyverno's manifests from
    an OCIRepository at ``path: ./`` are not this repository's root)."""
    if (obj.ref.api_version.partition("/")[0], obj.kind) != _FLUX_KUSTOMIZATION:
        return False
    spec = obj.body.get("spec")
    ref = spec.get("sourceRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping):
        return False
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    if kind in _ELSEWHERE_KINDS:
        return True
    namespace = str(ref.get("namespace") or obj.namespace)
    return kind == "GitRepository" and (namespace, name) in elsewhere


def _other_checkouts(objects: list[Obj]) -> set[tuple[str, str]]:
    """(namespace, name) of the GitRepositories among ``objects`` that are not this
    checkout: another URL or ref than ``flux-system``'s (bootstrap's own, this repository;
    without it in the walk, any GitRepository declared with a URL of its own)."""
    sources = {
        (o.namespace, o.name): _checkout(o)
        for o in objects
        if o.kind == "GitRepository" and o.ref.api_version.startswith("source.toolkit.fluxcd.io/")
    }
    home = next((c for (_, n), c in sources.items() if n == "flux-system"), None)
    return {key for key, c in sources.items() if key[1] != "flux-system" and c != home}


def _checkout(obj: Obj) -> tuple[str, str]:
    spec = obj.body.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    url = str(spec.get("url") or "").lower().removesuffix("/").removesuffix(".git")
    for prefix in ("ssh://", "https://", "http://", "git@"):
        url = url.removeprefix(prefix)
    ref = spec.get("ref")
    ref = ref if isinstance(ref, Mapping) else {}
    return url.replace(":", "/"), str(ref.get("branch") or ref.get("tag") or "")


def _deploys(obj: Obj) -> list[tuple[str, bool]]:
    group = obj.ref.api_version.partition("/")[0]
    spec = obj.body.get("spec")
    if not isinstance(spec, Mapping):
        return []
    if obj.kind == "Kustomization" and group == "kustomize.toolkit.fluxcd.io":
        path = spec.get("path")
        return [(path, True)] if isinstance(path, str) else []
    if obj.kind == "Application" and group == "argoproj.io":
        sources = [spec.get("source"), *_list(spec.get("sources"))]
        return [
            (s["path"], _recurse(s))
            for s in sources
            if isinstance(s, Mapping) and isinstance(s.get("path"), str)
        ]
    return []


def _recurse(source: Mapping[str, Any]) -> bool:
    directory = source.get("directory")
    return isinstance(directory, Mapping) and directory.get("recurse") is True


def _normal(path: str) -> str | None:
    """A GitOps path (``./clusters/prod``, relative to the repository) as a repository path."""
    parts: list[str] = []
    for part in PurePosixPath(path).parts:
        if part in ("/", "."):
            continue
        if part == "..":
            return None
        parts.append(part)
    return "/".join(parts)


def owner_folder(file: str, deployed: Mapping[str, bool]) -> str | None:
    """The deepest deployed folder ``file`` is deployed from, or None."""
    best: str | None = None
    for folder, recurse in deployed.items():
        covers = _parent(file) == folder or (recurse and inside(file, folder))
        if covers and (best is None or len(folder) > len(best)):
            best = folder
    return best


def inside(path: str, root: str) -> bool:
    return root in ("", ".") or path == root or path.startswith(root.rstrip("/") + "/")


def _parent(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
