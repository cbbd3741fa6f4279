"""A rendered app's desired state with some files edited in memory, before any commit.

An edit to an overlay patch or a values file changes a kustomize or Helm app's
output, so candidate fixes are judged on a fresh render: the revision is
extracted to a temporary folder (no checkout of the user's work tree), the
edited files are written over it, and the app is loaded from there with file
names relative to the repository root, as at any revision.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from gitmedic.reconciler.manifests.load import DesiredState, load_tree
from gitmedic.reconciler.manifests.tree import FsTree, GitTree, LoadFailure

__all__ = ["render_with"]


def render_with(
    root: Path,
    rev: str,
    app_path: str,
    namespace: str,
    contents: Mapping[str, str],
    deployer: str = "",
) -> DesiredState:
    with GitTree(root, rev).materialize("") as folder:
        for file, text in contents.items():
            rel = PurePosixPath(file)
            if rel.is_absolute() or ".." in rel.parts:
                raise LoadFailure(f"{file!r} is not a file path inside the repository")
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        state = load_tree(FsTree(folder), app_path, namespace, deployer=deployer)
    state.snapshot.revision = f"{rev}+edits"
    return state
