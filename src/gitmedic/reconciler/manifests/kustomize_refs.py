"""What a kustomization may reach before ``kubectl kustomize`` runs: the repository only.

kustomize fetches ``http(s)://`` resources and clones git repositories named as
resources, bases or components (``github.com/org/repo//path?ref=v1``,
``git@host:org/repo``, ``https://host/org/repo.git``); it tries any reference it
cannot find as a local path as a remote one, and its plugin configs
(``transformers:`` and the like, as files or inline) name files of their own. Run
by the bot, that is a request from the bot's network position chosen by whoever
wrote the kustomization (SSRF), and remote content becoming desired state.

So every reference of every field of every kustomization reachable from the
rendered one, and of the plugin configs they name (:mod:`.kustomize_plugins`),
is resolved first, by construction rather than by pattern: it must be a file or
folder of the repository, outside ``.git/`` and reached through no symbolic
link, or it is refused with an error naming the kustomization (or config) file
and line. The one exception: a remote reference when ``.gitmedic/config.yaml``
sets ``manifests: {allow_remote_bases: true}`` (read from the work tree, the
trusted current config, never from the revision being rendered, so a pull
request cannot allow itself). What the check might miss has no way out either:
the renderer runs in :mod:`.render_sandbox`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from gitmedic.reconciler.manifests.kustomize_plugins import (
    PLUGIN_FIELDS,
    config_references,
    plugin_references,
)
from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree
from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader

__all__ = [
    "KUSTOMIZATION_FILES",
    "check_references",
    "kustomization_file",
    "local_references",
    "outside_reach",
    "remote_allowed",
]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# Fields whose entries are paths, or objects with a path, a kustomization loads.
_PATH_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
_PATH_OBJECTS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_HOST = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?/")
_REMOTE_QUERY = re.compile(r"\?(ref|version|timeout|submodules)=")
ALLOW_HINT = "set manifests.allow_remote_bases: true in .gitmedic/config.yaml to allow it"


def check_references(tree: Tree, root: str, *, allow_remote: bool) -> list[ManifestError]:
    """Problems of the kustomization in ``root`` and of every local one it includes."""
    problems: list[ManifestError] = []
    seen: set[tuple[str, bool]] = set()
    pending = [(root, False)]  # (folder, its resources are plugin configs)
    while pending:
        folder, plugins = pending.pop()
        kfile = _kustomization(tree, folder) if (folder, plugins) not in seen else None
        seen.add((folder, plugins))
        if kfile is None:
            continue
        text, data = _load(tree, kfile)
        for field, ref in _references(data):
            problem = _check(tree, folder, field, ref, allow_remote)
            if problem:
                problems.append(ManifestError(kfile, _line_of(text, ref), problem))
                continue
            if _remote(ref):
                continue  # allowed by the config
            target = _join(folder, ref)
            holds_plugins = plugins or field in PLUGIN_FIELDS
            if _kustomization(tree, target) is not None:
                pending.append((target, holds_plugins))
            elif holds_plugins and field in (*PLUGIN_FIELDS, "resources"):
                problems.extend(_plugin_file(tree, folder, target, allow_remote))
    return problems


def _plugin_file(tree: Tree, folder: str, file: str, allow_remote: bool) -> list[ManifestError]:
    """Problems of the paths a file of plugin configs names (relative to the
    kustomization that loads it, as kustomize resolves them)."""
    try:
        text = tree.read_text(file)
    except LoadFailure:
        return []  # kustomize names what it cannot read
    problems = []
    for ref in plugin_references(text):
        problem = _check(tree, folder, "plugin config", ref, allow_remote)
        if problem:
            problems.append(ManifestError(file, _line_of(text, ref), problem))
    return problems


def outside_reach(folder: Path) -> list[Path]:
    """Outside a git work tree, the folders and files above ``folder`` (or a
    kustomization file's folder; another file reaches nothing) that its
    kustomizations (and the ones they include) name (``../../base``): the tree read must
    hold them, as a repository would. Read straight from disk; links are not followed
    (the tree built over them refuses them, naming them)."""
    if not folder.is_dir():  # a file: only a kustomization file reaches anything
        if folder.name not in KUSTOMIZATION_FILES:
            return []
        folder = folder.parent
    out: list[Path] = []
    seen: set[Path] = set()
    pending = _folders_below(folder)
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        kfile = next((current / n for n in KUSTOMIZATION_FILES if (current / n).is_file()), None)
        if kfile is None or kfile.is_symlink():
            continue
        try:
            data = yaml.load(kfile.read_text(encoding="utf-8"), Loader=ValueAsStrLoader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # kustomize names what it cannot read
        for _, ref in _references(data):
            if _remote(ref) or posixpath.isabs(ref):
                continue
            target = Path(posixpath.normpath(posixpath.join(current.as_posix(), ref)))
            if not target.is_relative_to(folder):
                out.append(target)
            if target.is_dir() and not target.is_symlink():
                pending.append(target)
    return out


def _folders_below(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, _ in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.append(Path(dirpath))
    return found


def local_references(tree: Tree, folder: str) -> list[str]:
    """The repository paths (files or folders) the kustomization in ``folder`` names;
    remote, absolute and escaping references are left out (:func:`check_references`
    reports them)."""
    kfile = kustomization_file(tree, folder)
    if kfile is None:
        return []
    out = []
    for _, ref in _references(_load(tree, kfile)[1]):
        target = _join(folder, ref)
        if not (_remote(ref) or posixpath.isabs(ref) or target == ".." or target.startswith("../")):
            out.append(target)
    return out


def is_component(tree: Tree, folder: str) -> bool:
    """A kustomize ``kind: Component``: a reusable piece an overlay's ``components:``
    includes, never built on its own (it patches objects it does not declare)."""
    kfile = kustomization_file(tree, folder)
    data = _load(tree, kfile)[1] if kfile else None
    return isinstance(data, dict) and data.get("kind") == "Component"


def kustomization_file(tree: Tree, folder: str) -> str | None:
    """The kustomization file of ``folder``, if it has one."""
    return _kustomization(tree, folder)


def _check(tree: Tree, folder: str, field: str, ref: str, allow_remote: bool) -> str:
    if _remote(ref):
        if allow_remote:
            return ""
        return f"{field}: {ref!r} is a remote reference; gitmedic does not fetch it ({ALLOW_HINT})"
    if posixpath.isabs(ref):
        return f"{field}: {ref!r} is an absolute path; only paths inside the repository are read"
    target = _join(folder, ref)
    if target.startswith("../") or target == "..":
        return (
            f"{field}: {ref!r} is outside the repository: gitmedic reads only the git work "
            "tree holding the path it is given (outside one, the folders the path's "
            "kustomizations name); detect from a clone that holds it"
        )
    if ".git" in PurePosixPath(target).parts:
        return f"{field}: {ref!r} is inside .git/, git's own files, never a manifest's input"
    if tree.is_link(target):
        return f"{field}: {ref!r} is a symbolic link; gitmedic does not follow links"
    if not _exists(tree, target):
        return (
            f"{field}: {ref!r} is not a file or folder of the repository; kustomize would "
            "try it as a remote reference, so gitmedic does not run it"
        )
    return ""


def _exists(tree: Tree, target: str) -> bool:
    return (
        tree.is_file(target)
        or _kustomization(tree, target) is not None
        or bool(tree.files(target) or tree.links(target))
    )


def _remote(ref: str) -> bool:
    return (
        "://" in ref
        or ref.startswith(("git@", "git::", "ssh:", "file:"))
        or bool(_HOST.match(ref))
        or bool(_REMOTE_QUERY.search(ref))
    )


def _references(data: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(data, dict):
        return
    for field in _PATH_LISTS:
        for item in _list(data.get(field)):
            if not isinstance(item, str):
                continue
            if field in PLUGIN_FIELDS and "\n" in item:  # an inline plugin config
                yield from ((field, ref) for ref in plugin_references(item))
            elif field != "patchesStrategicMerge" or "\n" not in item:  # not an inline patch
                yield field, item
    for field in _PATH_OBJECTS:
        for item in _list(data.get(field)):
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield field, item["path"]
    for field in _GENERATORS:
        for gen in _list(data.get(field)):
            yield from _generator_files(field, gen)
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield "openapi", openapi["path"]
    for field in ("helmCharts", "helmGlobals", "helmChartInflationGenerator"):
        yield from ((field, ref) for ref in config_references(data.get(field)))


def _generator_files(field: str, gen: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(gen, dict):
        return
    entries = [*_list(gen.get("files")), *_list(gen.get("envs")), gen.get("env")]
    for entry in entries:
        if isinstance(entry, str) and entry:
            yield field, entry.split("=", 1)[-1]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _kustomization(tree: Tree, folder: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        path = _join(folder, name)
        if tree.is_file(path):
            return path
    return None


def _load(tree: Tree, kfile: str) -> tuple[str, Any]:
    """The file's text and data; what does not parse is left for kustomize to report."""
    try:
        text = tree.read_text(kfile)
        return text, yaml.load(text, Loader=ValueAsStrLoader)
    except (LoadFailure, yaml.YAMLError):
        return "", None


def _line_of(text: str, ref: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if ref in line.split(" #", 1)[0]:
            return number
    return 0


def _join(folder: str, ref: str) -> str:
    joined = posixpath.normpath(posixpath.join(folder or ".", ref))
    return "" if joined == "." else joined


_allowed: dict[Path, tuple[tuple[int, int], bool]] = {}


def remote_allowed(root: Path) -> bool:
    """``manifests.allow_remote_bases`` of the work tree's config (False without one)."""
    from gitmedic.reconciler.config import CONFIG_PATH, ConfigError
    from gitmedic.reconciler.manifests.config_file import load_config

    path = root / CONFIG_PATH
    try:
        st = path.lstat()
    except OSError:
        return False
    key = (st.st_mtime_ns, st.st_size)
    cached = _allowed.get(path)
    if cached is None or cached[0] != key:
        try:
            allowed = load_config(path).manifests.allow_remote_bases
        except ConfigError:
            allowed = False  # an invalid config allows nothing; `memory check` says why
        cached = _allowed[path] = (key, allowed)
    return cached[1]
