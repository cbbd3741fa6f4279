"""The field operations (set, remove, insert, append) on a document, and their inverses.

``apply_op`` works on plain data and on ruamel round-trip data alike: ruamel's
containers subclass ``dict`` and ``list``; ``convert`` turns the edit's JSON value
into the container's flavour (a deep copy, or ruamel data styled like the value it
replaces). The inverse names list items by position where a field selector would
no longer find them after the edit (e.g. the edit renamed the item).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gitmedic.reconciler.manifests.documents import EditError
from gitmedic.reconciler.manifests.edit import Edit, Op, PathNotFound
from gitmedic.reconciler.manifests.paths import (
    Match,
    Path,
    Segment,
    format_path,
    item_position,
    lookup,
    missing_message,
    resolve_parent,
)
from gitmedic.reconciler.manifests.render import rt_key

__all__ = ["Change", "apply_op", "inverse_of"]

Convert = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Change:
    """What an operation found: the old value (set/remove) and the position it acted on."""

    old: Any
    position: int


def apply_op(root: Any, edit: Edit, what: str, convert: Convert) -> Change:
    if edit.op is Op.APPEND:
        return _append(root, edit, what, convert)
    parent = resolve_parent(root, edit.path, what)
    last = edit.path[-1]
    position = item_position(parent, last)
    if edit.op is Op.INSERT:
        return _insert(parent, edit, what, convert, position)
    if position is None:
        raise PathNotFound(missing_message(what, root, edit.path) + _hint(edit))
    key = last if isinstance(parent, dict) else position
    old = parent[key]
    if edit.op is Op.SET:
        parent[key] = convert(edit.value, old)
    else:
        del parent[key]
    return Change(old, position)


def _hint(edit: Edit) -> str:
    return "; use insert to add it" if edit.op is Op.SET else ""


def _append(root: Any, edit: Edit, what: str, convert: Convert) -> Change:
    found, target = lookup(root, edit.path)
    if not found:
        raise PathNotFound(missing_message(what, root, edit.path))
    if not isinstance(target, list):
        raise EditError(f"{what}: {format_path(edit.path)} is not a list, cannot append")
    _unflow(target)
    target.append(convert(edit.value, None))
    return Change(None, len(target) - 1)


def _insert(parent: Any, edit: Edit, what: str, convert: Convert, found: int | None) -> Change:
    last = edit.path[-1]
    shown = format_path(edit.path)
    if found is not None and not isinstance(last, int):
        raise PathNotFound(f"{what} already has {shown}; use set to change it")
    if isinstance(parent, dict):
        if not isinstance(last, str):
            raise EditError(f"{what}: {shown} addresses a mapping by index")
        position = _position(edit.index, len(parent), what, shown)
        _insert_key(parent, position, last, convert(edit.value, None))
        return Change(None, position)
    if not isinstance(parent, list):
        raise EditError(f"{what}: {format_path(edit.path[:-1])} holds no mapping or list")
    if isinstance(last, str):
        raise EditError(f"{what}: {shown} addresses a list by key")
    if isinstance(last, Match):
        if not isinstance(edit.value, dict) or str(edit.value.get(last.field)) != last.value:
            raise EditError(
                f"{what}: the item inserted at {shown} must have {last.field}: {last.value}"
            )
        position = _position(edit.index, len(parent), what, shown)
    else:
        position = _position(last, len(parent), what, shown)
    _unflow(parent)
    parent.insert(position, convert(edit.value, None))
    return Change(None, position)


def _position(index: int | None, size: int, what: str, shown: str) -> int:
    if index is None:
        return size
    if not 0 <= index <= size:
        raise EditError(f"{what}: cannot insert {shown} at position {index} of {size}")
    return index


def _unflow(container: Any) -> None:
    """An empty ``{}`` or ``[]`` that gets content becomes a block (flow style is sticky)."""
    if isinstance(container, CommentedMap | CommentedSeq) and not container:
        container.fa.set_block_style()


def _insert_key(parent: dict[Any, Any], position: int, key: str, value: Any) -> None:
    _unflow(parent)
    insert = getattr(parent, "insert", None)
    if insert is not None:  # ruamel's CommentedMap keeps comments where they were
        insert(position, rt_key(key), value)
        return
    items = list(parent.items())
    items.insert(position, (key, value))
    parent.clear()
    parent.update(items)


def inverse_of(edit: Edit, change: Change, before: Any, after: Any) -> Edit:
    """The edit that turns ``after`` back into ``before``."""
    if edit.op is Op.APPEND:
        path = (*edit.path, change.position)
        return replace(edit, op=Op.REMOVE, path=path, value=None, index=None)
    if edit.op is Op.INSERT:
        path = _at(edit.path[:-1], edit.path[-1], change.position)
        return replace(edit, op=Op.REMOVE, path=path, value=None, index=None)
    if edit.op is Op.SET:
        path = stable_path(edit.path, before, after)
        return replace(edit, path=path, value=change.old, index=None)
    path = _at(stable_path(edit.path[:-1], before, after), edit.path[-1], change.position)
    index = None if isinstance(edit.path[-1], int) else change.position
    return replace(edit, op=Op.INSERT, path=path, value=change.old, index=index)


def _at(parent_path: Path, last: Segment, position: int) -> Path:
    return (*parent_path, position if isinstance(last, int) else last)


def stable_path(path: Path, before: Any, after: Any) -> Path:
    """``path`` with each field selector that no longer finds the same item in
    ``after`` replaced by the item's index."""
    out: list[Segment] = []
    node_b, node_a = before, after
    for seg in path:
        pos_b = item_position(node_b, seg)
        if isinstance(seg, Match) and item_position(node_a, seg) != pos_b and pos_b is not None:
            seg = pos_b
        out.append(seg)
        node_b = _child(node_b, seg, pos_b)
        node_a = _child(node_a, seg, item_position(node_a, seg))
    return tuple(out)


def _child(node: Any, seg: Segment, position: int | None) -> Any:
    if position is None:
        return None
    return node[seg] if isinstance(node, dict) else node[position]
