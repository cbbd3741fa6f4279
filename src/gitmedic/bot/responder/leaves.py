"""Leaf-level differences between two versions of one Kubernetes object.

Bisect restores only the fields a commit changed that matter to the finding, so
it needs the commit's change to an object as a list of small, independent
paths. The walk is joint over both versions:

- mappings: a key present on one side only is one difference (the whole key),
  else recurse; a mapping emptied or filled (``strategy: {}``) is one difference;
- lists of named items (containers, env, ports, volumes) are matched by name,
  so a path reads ``containers[name=server].image`` and survives reordering; an
  item present on one side only is one difference;
- other lists of mappings of equal length are walked by index;
- anything else (scalars, lists of scalars like ``command``, lists whose names
  repeat, e.g. a shadowed env var) is a leaf compared as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.reconciler.manifests.documents import same
from gitmedic.reconciler.manifests.paths import Match, Path

IGNORED = (("status",), ("metadata", "resourceVersion"), ("metadata", "generation"))


def changed_paths(old: Any, new: Any) -> list[Path]:
    """Paths at which ``old`` and ``new`` differ, in document order."""
    out: list[Path] = []
    _walk(old, new, (), out)
    return [p for p in out if not any(p[: len(i)] == i for i in IGNORED)]


def _walk(old: Any, new: Any, path: Path, out: list[Path]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping) and old and new:
        for k in [*old, *(k for k in new if k not in old)]:
            if k in old and k in new:
                _walk(old[k], new[k], (*path, str(k)), out)
            else:
                out.append((*path, str(k)))
        return
    if isinstance(old, list) and isinstance(new, list):
        _walk_list(old, new, path, out)
        return
    if not same(old, new):
        out.append(path)


def _walk_list(old: list[Any], new: list[Any], path: Path, out: list[Path]) -> None:
    old_named, new_named = _by_name(old), _by_name(new)
    if old_named is not None and new_named is not None:
        for name in [*old_named, *(n for n in new_named if n not in old_named)]:
            seg = (*path, Match("name", name))
            if name in old_named and name in new_named:
                _walk(old_named[name], new_named[name], seg, out)
            else:
                out.append(seg)
        return
    if len(old) == len(new) and all(isinstance(i, Mapping) for i in [*old, *new]) and old:
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _walk(a, b, (*path, i), out)
        return
    if not same(old, new):
        out.append(path)


def _by_name(items: list[Any]) -> dict[str, Any] | None:
    """Items by their ``name``, or None unless every item has a distinct one."""
    if not items or not all(isinstance(i, Mapping) and "name" in i for i in items):
        return None
    named = {str(i["name"]): i for i in items}
    return named if len(named) == len(items) else None
