"""Where a kustomize render error belongs: the source file and line, or the render root.

``kubectl kustomize`` reports a failed build as one long chain of quoted paths
(``accumulating resources from '../base': ... from 'gone.yaml': ...``), and its
output, when gitmedic cannot read it, has only the rendered stream's positions.
Neither is a place in the repository. So:

- a failed build is blamed on the kustomization, among the one rendered and every
  local one it includes, whose line names the innermost quoted reference (the
  base's ``- gone.yaml``, not the overlay's ``- ../base``), or, for a field of the
  wrong type, on the one kustomization setting that field; else the error is the
  render root's, at no line, and says so;
- output gitmedic cannot read is traced to the source files kustomize read (a
  resource file of the root or of a base it includes that fails to parse is named
  at its own line); otherwise it is a render error of the root, at no line, naming
  the line of kustomize's output only as such.
"""

from __future__ import annotations

import re

from gitmedic.reconciler.manifests.kustomize_refs import kustomization_file, local_references
from gitmedic.reconciler.manifests.parse import ManifestError, parse_text
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree

__all__ = ["build_error", "output_errors"]

_QUOTED = re.compile(r"'([^'\s]+)'")
_FIELD = re.compile(r"Go struct field Kustomization\.(\w+)")
_YAML = (".yaml", ".yml", ".json")
_RENDERS_IT = "kustomize renders it; gitmedic cannot read it"


def build_error(tree: Tree, root: str, kfile: str, message: str) -> ManifestError:
    """A failed ``kubectl kustomize`` of ``root``, at the line its message points to."""
    files = _kustomizations(tree, root)
    for quoted in reversed(_QUOTED.findall(message)):
        for file in files:
            line = _line_naming(tree, file, quoted)
            if line:
                return ManifestError(file, line, f"kustomize build failed: {message}")
    field = _FIELD.search(message)
    if field:  # "cannot unmarshal ... into Go struct field Kustomization.namePrefix"
        keyed = [(f, n) for f in files if (n := _key_line(tree, f, field.group(1)))]
        if len(keyed) == 1:
            return ManifestError(*keyed[0], f"kustomize build failed: {message}")
    return ManifestError(
        kfile, 0, f"render error of {root or '.'}: kustomize build failed: {message}"
    )


def output_errors(
    tree: Tree, root: str, kfile: str, errors: list[ManifestError]
) -> list[ManifestError]:
    """Errors reading kustomize's output of ``root``, moved to the source files."""
    if not errors:
        return []
    sources = [e for f in _resource_files(tree, root) for e in _unreadable(tree, f)]
    if sources:
        return sources
    return [
        ManifestError(
            kfile,
            0,
            f"render error of {root or '.'}: kustomize's output cannot be read "
            f"({e.message}, at line {e.line} of the rendered output)",
        )
        for e in errors
    ]


def _kustomizations(tree: Tree, root: str) -> list[str]:
    """The kustomization files of ``root`` and of every local one it includes, root first."""
    out: list[str] = []
    seen: set[str] = set()
    pending = [root]
    while pending:
        folder = pending.pop(0)
        kfile = kustomization_file(tree, folder) if folder not in seen else None
        seen.add(folder)
        if kfile is None:
            continue
        out.append(kfile)
        pending.extend(local_references(tree, folder))
    return out


def _resource_files(tree: Tree, root: str) -> list[str]:
    files: list[str] = []
    for kfile in _kustomizations(tree, root):
        folder = kfile.rpartition("/")[0]
        for target in [folder, *local_references(tree, folder)]:
            listed = [target] if tree.is_file(target) else tree.files(target)
            files.extend(f for f in listed if f.endswith(_YAML) and f not in files)
    return [f for f in files if not f.rpartition("/")[2].startswith(("kustomization", "Kust"))]


def _unreadable(tree: Tree, file: str) -> list[ManifestError]:
    try:
        parsed = parse_text(tree.read_text(file), file)
    except LoadFailure as exc:
        return [ManifestError(file, exc.line, str(exc))]
    if parsed.foreign:
        return []
    return [
        ManifestError(
            e.file, e.line, f"{e.message} (kustomize renders it; gitmedic cannot read it)"
        )
        for e in parsed.errors
    ]


def _key_line(tree: Tree, kfile: str, key: str) -> int:
    """The line of a top-level ``key:`` of a kustomization, or 0."""
    try:
        lines = tree.read_text(kfile).splitlines()
    except LoadFailure:
        return 0
    return next((n for n, text in enumerate(lines, 1) if text.startswith(f"{key}:")), 0)


def _line_naming(tree: Tree, kfile: str, quoted: str) -> int:
    try:
        lines = tree.read_text(kfile).splitlines()
    except LoadFailure:
        return 0
    for number, text in enumerate(lines, 1):
        entry = text.split("#", 1)[0].strip().removeprefix("- ").strip().strip("'\"")
        if entry and (entry == quoted or entry.rstrip("/") == quoted.rstrip("/")):
            return number
    return 0
