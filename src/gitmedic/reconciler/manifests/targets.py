"""Which file an edit to a rendered field belongs in.

A plain manifest's field is edited where the object is declared. A rendered
object's field that an overlay patch (kustomize) or a values file (Helm) sets
is edited there instead: editing the base would leave the overlay's value in
force, and would change every other environment that shares the base.
"""

from __future__ import annotations

from typing import Any

from gitmedic.detectors.origin import origin_of
from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.manifests.paths import (
    Match,
    Path,
    Segment,
    format_path,
    item_position,
    step,
)

__all__ = ["edit_target", "indexed"]


def edit_target(obj: Obj, path: Path | None = None) -> str | None:
    """The file to edit for ``path`` of ``obj`` (the whole object when ``path`` is None)."""
    if obj.source is None:
        return None
    if path:
        origin = origin_of(obj.source.origins, format_path(indexed(obj.body, path)))
        if origin is not None:
            return origin.file
    return obj.source.file


def indexed(body: Any, path: Path) -> Path:
    """``path`` with list items selected by a field as their index (how origins name them)."""
    out: list[Segment] = []
    node = body
    for seg in path:
        at = item_position(node, seg) if isinstance(seg, Match) else None
        out.append(seg if at is None else at)
        _, node = step(node, seg)
    return tuple(out)
