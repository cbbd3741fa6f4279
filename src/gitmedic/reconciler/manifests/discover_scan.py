"""The repository as discovery reads it: every Kubernetes object in its YAML files, its
kustomize roots and charts, and which files a folder deploys.

The repository is hostile input: links are never followed (they are skipped, as
hidden folders are), files over :data:`MAX_FILE_BYTES` and YAML that does not parse
are left out (a CI config or a template is not an object), and nothing is run.
A chart's files are not read as objects (its templates are not YAML until rendered,
its ``charts/`` and ``crds/`` are its own); whether they template Argo CD Applications
is noted, since such a chart is an app of apps whose children only a render would
show. A chart in another sub-folder of a chart is a chart of its own (helm renders
only ``templates/`` and ``charts/``; an Application may point at it).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gitmedic.reconciler.manifests.kustomize_refs import KUSTOMIZATION_FILES
from gitmedic.reconciler.repofs import read_text

__all__ = ["Doc", "RepoScan", "scan_repo"]

MAX_FILE_BYTES = 4 * 1024 * 1024
_CHART_OWN = {"templates", "charts", "crds"}  # the folders helm renders or installs
_RESOURCE_FIELDS = ("resources", "bases", "components")


@dataclass(frozen=True)
class Doc:
    """One Kubernetes object of the repository, as written (not rendered)."""

    file: str  # repo-relative
    body: dict[str, Any]

    @property
    def group(self) -> str:
        api = str(self.body.get("apiVersion", ""))
        return api.split("/")[0] if "/" in api else ""

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        return str(mapping(self.body.get("metadata")).get("name") or "")

    @property
    def namespace(self) -> str:
        return str(mapping(self.body.get("metadata")).get("namespace") or "")

    @property
    def spec(self) -> dict[str, Any]:
        return mapping(self.body.get("spec"))


@dataclass
class RepoScan:
    root: Path
    docs: list[Doc] = field(default_factory=list)
    dirs: set[str] = field(default_factory=set)  # every folder read ('' is the root)
    kustomize_dirs: dict[str, dict[str, Any]] = field(default_factory=dict)  # folder: its file
    chart_dirs: set[str] = field(default_factory=set)
    templated_apps: set[str] = field(default_factory=set)  # charts templating Applications
    files_with_objects: set[str] = field(default_factory=set)
    children: dict[str, list[str]] = field(default_factory=dict)  # folder: its sub-folders

    def docs_in(self, files: set[str]) -> list[Doc]:
        return [d for d in self.docs if d.file in files]

    def included_dirs(self) -> set[str]:
        """Folders another kustomization includes (bases, components): not apps themselves."""
        out: set[str] = set()
        for folder, data in self.kustomize_dirs.items():
            out.update(r for r in _local_refs(folder, data) if r in self.dirs)
        return out

    def deployed_files(self, folder: str) -> set[str]:
        """The files a deployer pointed at ``folder`` applies: its kustomization's resources
        (followed into included folders), else, as Flux and Argo CD do, every manifest below
        it (a sub-folder with a kustomization taken through it)."""
        seen: set[str] = set()
        out: set[str] = set()
        pending = [folder]  # a stack, not recursion: a hostile repo may nest deep
        while pending:
            here = pending.pop()
            if here in seen:
                continue
            seen.add(here)
            if here in self.kustomize_dirs:
                refs = list(_local_refs(here, self.kustomize_dirs[here]))
                pending.extend(r for r in refs if r in self.dirs)
                out.update(r for r in refs if r not in self.dirs)  # files it lists
                continue
            out.update(f for f in self.files_with_objects if posixpath.dirname(f) == here)
            pending.extend(self.children.get(here, ()))
        return out


def scan_repo(root: Path) -> RepoScan:
    scan = RepoScan(root)
    for folder, files in _walk(root):
        chart = "Chart.yaml" in files
        if not chart and _in_chart(folder, scan.chart_dirs):
            continue  # a chart's own files (ci/ values, files/): not deployed by themselves
        scan.dirs.add(folder)
        if chart:
            scan.chart_dirs.add(folder)
            if _templates_applications(root, folder):
                scan.templated_apps.add(folder)
            continue
        for name in files:
            rel = posixpath.join(folder, name) if folder else name
            if name in KUSTOMIZATION_FILES:
                scan.kustomize_dirs[folder] = mapping(_first(_load(root, rel)))
            elif name.endswith((".yaml", ".yml", ".json")):
                _read_objects(scan, rel)
    for sub in sorted(scan.dirs - {""}):
        scan.children.setdefault(posixpath.dirname(sub), []).append(sub)
    return scan


def _walk(root: Path) -> Iterator[tuple[str, list[str]]]:
    """(folder, regular files) top-down; hidden folders, links and chart insides skipped."""
    for here, subdirs, files in os.walk(root, followlinks=False):
        rel = Path(here).relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        subdirs[:] = sorted(
            d for d in subdirs if not d.startswith(".") and not os.path.islink(Path(here, d))
        )
        if "Chart.yaml" in files:
            # its templates are no YAML until rendered; its charts/ are its own; another
            # sub-folder may hold a chart of its own
            subdirs[:] = [d for d in subdirs if d not in _CHART_OWN]
        yield rel, sorted(f for f in files if not os.path.islink(Path(here, f)))


def _in_chart(folder: str, charts: set[str]) -> bool:
    while folder:
        folder = posixpath.dirname(folder)
        if folder in charts:
            return True
    return False


def _read_objects(scan: RepoScan, rel: str) -> None:
    for body in _load(scan.root, rel):
        if isinstance(body, dict) and body.get("apiVersion") and body.get("kind"):
            scan.docs.append(Doc(rel, body))
            scan.files_with_objects.add(rel)


def _load(root: Path, rel: str) -> list[Any]:
    try:
        if (root / rel).stat().st_size > MAX_FILE_BYTES:
            return []
        return list(yaml.safe_load_all(read_text(root, rel)))
    except (OSError, ValueError, yaml.YAMLError):  # not YAML, not an object: not deployed
        return []


def _first(docs: list[Any]) -> Any:
    return docs[0] if docs else None


def _templates_applications(root: Path, chart: str) -> bool:
    templates = root / chart / "templates"
    if not templates.is_dir() or templates.is_symlink():
        return False
    for entry in sorted(templates.iterdir()):
        if entry.suffix in (".yaml", ".yml") and not entry.is_symlink():
            try:
                text = entry.read_text(errors="replace")
            except OSError:
                continue
            if "argoproj.io" in text and "kind: Application" in text:
                return True
    return False


def _local_refs(folder: str, data: dict[str, Any]) -> Iterator[str]:
    for key in _RESOURCE_FIELDS:
        items = data.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, str) and "://" not in item and not item.startswith("git@"):
                yield repo_path(posixpath.join(folder, item))


def repo_path(rel: str) -> str:
    """``rel`` normalised below the root ('' for the root); '..' past it stays visible."""
    joined = posixpath.normpath(rel.strip() or ".").lstrip("/")
    return "" if joined == "." else joined


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
