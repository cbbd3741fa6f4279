"""Paths inside a Kubernetes object: keys, list indexes, and list items selected by a field.

A path is a tuple of segments: ``str`` (a mapping key), ``int`` (a list index) or
:class:`Match` (the list item whose ``field`` equals ``value``, e.g. the container
named ``server``). Selecting by name keeps an edit meaningful when items move.

The text form is what people and LLMs write and what PR bodies show::

    spec.template.spec.containers[name=server].env[name=PORT].value
    metadata.annotations["prometheus.io/scrape"]      # keys with dots are quoted
    spec.ports[0].targetPort

The JSON form is a list: keys as strings, indexes as integers, matches as
``"[name=server]"``. The same navigation works on plain data (PyYAML) and on
ruamel's round-trip containers, which subclass ``dict`` and ``list``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Match",
    "Path",
    "PathError",
    "Segment",
    "format_path",
    "lookup",
    "parse_path",
    "path_from_json",
    "path_to_json",
    "resolve_parent",
]


class PathError(Exception):
    """A path that does not parse, or that does not exist in the object."""


@dataclass(frozen=True)
class Match:
    """Selects the list item whose ``field`` equals ``value``."""

    field: str
    value: str

    def __str__(self) -> str:
        return f"[{self.field}={self.value}]"


Segment = str | int | Match
Path = tuple[Segment, ...]

_MATCH = re.compile(r"^\[([A-Za-z0-9_.-]+)=([^\]]*)\]$")
_TOKEN = re.compile(
    r'\.?([^.\["]+)|\[(\d+)\]|\[([A-Za-z0-9_.-]+)=([^\]]*)\]|\["((?:[^"\\]|\\.)*)"\]'
)


def parse_path(text: str) -> Path:
    """Parse the dotted text form; raise :class:`PathError` with the offending position."""
    out: list[Segment] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or (m.group(0).startswith(".") and pos == 0):
            raise PathError(f"cannot parse path {text!r} at character {pos + 1}")
        key, index, field, value, quoted = m.groups()
        if key is not None:
            out.append(key)
        elif index is not None:
            out.append(int(index))
        elif field is not None:
            out.append(Match(field, value))
        else:
            out.append(json.loads(f'"{quoted}"'))
        pos = m.end()
    if not out:
        raise PathError("empty path")
    return tuple(out)


def format_path(path: Sequence[Segment]) -> str:
    parts: list[str] = []
    for seg in path:
        if isinstance(seg, Match):
            parts.append(str(seg))
        elif isinstance(seg, int):
            parts.append(f"[{seg}]")
        elif re.fullmatch(r"[^.\[\]\"]+", seg):
            parts.append(f".{seg}" if parts else seg)
        else:
            parts.append(f"[{json.dumps(seg)}]")
    return "".join(parts)


def path_to_json(path: Sequence[Segment]) -> list[str | int]:
    return [str(s) if isinstance(s, Match) else s for s in path]


def path_from_json(data: object) -> Path:
    """A path from its JSON form: a list of segments, or the dotted text form."""
    if isinstance(data, str):
        return parse_path(data)
    if not isinstance(data, list):
        raise PathError(f"path must be a list, not {type(data).__name__}")
    out: list[Segment] = []
    for item in data:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise PathError(f"path segment {item!r} is neither a key nor an index")
        m = _MATCH.match(item) if isinstance(item, str) else None
        out.append(Match(m.group(1), m.group(2)) if m else item)
    return tuple(out)


def step(node: Any, seg: Segment) -> tuple[bool, Any]:
    """One step down: (found, child)."""
    if isinstance(seg, Match):
        if isinstance(node, list):
            for item in node:
                if isinstance(item, dict) and str(item.get(seg.field)) == seg.value:
                    return True, item
        return False, None
    if isinstance(seg, int):
        if isinstance(node, list) and -len(node) <= seg < len(node):
            return True, node[seg]
        return False, None
    if isinstance(node, dict) and seg in node:
        return True, node[seg]
    return False, None


def lookup(node: Any, path: Sequence[Segment]) -> tuple[bool, Any]:
    """The value at ``path`` as (found, value); value is None when not found."""
    for seg in path:
        found, node = step(node, seg)
        if not found:
            return False, None
    return True, node


def resolve_parent(root: Any, path: Sequence[Segment], what: str) -> Any:
    """The container holding the last segment of ``path``; :class:`PathError` names
    the first segment that is missing and what exists there instead."""
    node = root
    for depth, seg in enumerate(path[:-1]):
        found, child = step(node, seg)
        if not found:
            raise PathError(_missing(what, path[: depth + 1], node))
        node = child
    return node


def item_position(container: Any, seg: Segment) -> int | None:
    """The index a key or list segment addresses in ``container`` (None if absent)."""
    if isinstance(seg, Match):
        if not isinstance(container, list):
            return None
        for i, item in enumerate(container):
            if isinstance(item, dict) and str(item.get(seg.field)) == seg.value:
                return i
        return None
    if isinstance(seg, int):
        ok = isinstance(container, list) and -len(container) <= seg < len(container)
        return seg % len(container) if ok else None
    if isinstance(container, dict) and seg in container:
        return list(container).index(seg)
    return None


def _missing(what: str, path: Sequence[Segment], node: Any) -> str:
    where = f"{what} has no {format_path(path)}"
    if isinstance(node, dict):
        keys = ", ".join(str(k) for k in list(node)[:12])
        return f"{where} (there: {keys or 'an empty mapping'})"
    if isinstance(node, list):
        names = [str(i.get("name")) for i in node if isinstance(i, dict) and "name" in i]
        shown = f"items named {', '.join(names[:12])}" if names else f"{len(node)} items"
        return f"{where} (the list has {shown})"
    return f"{where} ({format_path(path[:-1]) or 'the object'} is a {type(node).__name__})"


def missing_message(what: str, root: Any, path: Sequence[Segment]) -> str:
    """Why ``path`` is not found in ``root``, naming the first missing segment."""
    node = root
    for depth, seg in enumerate(path):
        found, child = step(node, seg)
        if not found:
            return _missing(what, path[: depth + 1], node)
        node = child
    return f"{what} has {format_path(path)}"
