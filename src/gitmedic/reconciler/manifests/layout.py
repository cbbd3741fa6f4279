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
app's, the rest form one app of their own.
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


def deployed_folders(objects: Iterable[Obj], folders: Iterable[str]) -> dict[str, bool]:
    """Of ``folders`` (repository paths that exist), those a GitOps object among
    ``objects`` deploys, each with whether its subfolders are deployed too (Flux: always;
    Argo CD: with ``directory.recurse``)."""
    known = set(folders)
    out: dict[str, bool] = {}
    for obj in objects:
        for path, recurse in _deploys(obj):
            folder = _normal(path)
            if folder is not None and folder in known:
                out[folder] = out.get(folder, False) or recurse
    return out


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
