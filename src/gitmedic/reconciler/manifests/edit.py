"""Manifest edits: small, frozen, JSON-serialisable descriptions of one change.

An :class:`Edit` names a file, an object in it (kind/namespace/name), a path inside
the object (see :mod:`.paths`) and an operation:

=================  ==========================================================
``set``            replace the value at an existing path
``remove``         delete a key or a list item
``insert``         add a new key (at ``index`` among the keys, default last) or a
                   list item (at the path's integer index, or at ``index`` when the
                   last segment selects by field, e.g. ``env[name=CART_ADDR]``)
``append``         add ``value`` at the end of the list at ``path``
``add_object``     add a whole document (``value`` is the object) before the
                   ``index``-th ``---`` segment of the file (default: at the end)
``remove_object``  delete the object's whole document
=================  ==========================================================

Edits travel in PR markers and are proposed by LLMs, so they have a stable JSON
form (:meth:`Edit.to_json` / :meth:`Edit.from_json`). ``base`` is the git blob id
of the file content the edit was computed against; applying it to any other
content raises :class:`StaleEdit`. ``verbatim`` carries exact text for an exact
undo: the inverse of an edit (see :func:`~.apply.apply_edit`) restores the
original bytes through it, and falls back to rendering ``value`` when the text no
longer reads back as the intended value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.documents import EditError, describe
from gitmedic.reconciler.manifests.paths import (
    Path,
    PathError,
    format_path,
    path_from_json,
    path_to_json,
)

__all__ = ["Edit", "Op", "PathNotFound", "StaleEdit", "Verbatim"]


class StaleEdit(EditError):
    """The file changed since the edit was computed."""


class PathNotFound(EditError):
    """The path of an edit does not exist in the object (or, for insert, already does)."""


class Op(StrEnum):
    SET = "set"
    REMOVE = "remove"
    INSERT = "insert"
    APPEND = "append"
    ADD_OBJECT = "add_object"
    REMOVE_OBJECT = "remove_object"


@dataclass(frozen=True)
class Verbatim:
    """Exact text replacing ``count`` lines from ``line`` (0-based, counted from the
    first line of the object's ``---`` segment). For ``add_object``: the segment."""

    line: int
    count: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "count": self.count, "text": self.text}


@dataclass(frozen=True)
class Edit:
    op: Op
    file: str
    resource: Resource
    path: Path = ()
    value: Any = None
    index: int | None = None
    base: str | None = field(default=None, compare=False)
    verbatim: Verbatim | None = field(default=None, compare=False)

    def with_base(self, base: str | None) -> Edit:
        return replace(self, base=base)

    def describe(self) -> str:
        where = f"{describe(self.resource)} in {self.file}"
        if self.op in (Op.ADD_OBJECT, Op.REMOVE_OBJECT):
            return f"{self.op.value.replace('_', ' ')} {where}"
        shown = f" = {self.value!r}" if self.op in (Op.SET, Op.INSERT, Op.APPEND) else ""
        return f"{self.op.value} {format_path(self.path)}{shown} of {where}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "op": self.op.value,
            "file": self.file,
            "resource": self.resource.to_json(),
            "path": path_to_json(self.path),
        }
        if self.op not in (Op.REMOVE, Op.REMOVE_OBJECT):
            out["value"] = self.value
        for name in ("index", "base"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.verbatim is not None:
            out["verbatim"] = self.verbatim.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any) -> Edit:
        """Parse and validate the JSON form; :class:`EditError` says what is wrong."""
        try:
            return _from_json(data)
        except (KeyError, TypeError, ValueError, PathError) as exc:
            raise EditError(f"invalid edit: {exc}") from None


def _from_json(data: Any) -> Edit:
    if not isinstance(data, dict):
        raise TypeError(f"an edit is an object, not {type(data).__name__}")
    unknown = set(data) - {"op", "file", "resource", "path", "value", "index", "base", "verbatim"}
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}")
    res = data["resource"]
    if not isinstance(res, dict):
        raise TypeError("resource must be an object with kind, namespace and name")
    resource = Resource(
        _str(res, "kind"),
        str(res.get("namespace") or ""),
        _str(res, "name"),
        str(res.get("apiVersion") or "v1"),
    )
    index = data.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise TypeError("index must be an integer")
    base = data.get("base")
    if base is not None and not isinstance(base, str):
        raise TypeError("base must be a blob id")
    return Edit(
        Op(data["op"]),
        _str(data, "file"),
        resource,
        path_from_json(data.get("path", [])),
        data.get("value"),
        index,
        base,
        _verbatim(data.get("verbatim")),
    )


def _verbatim(data: Any) -> Verbatim | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError("verbatim must be an object")
    line, count, text = data["line"], data["count"], data["text"]
    if not (isinstance(line, int) and isinstance(count, int) and isinstance(text, str)):
        raise TypeError("verbatim needs integer line and count and a text")
    if line < 0 or count < 0:
        raise ValueError("verbatim line and count must not be negative")
    return Verbatim(line, count, text)


def _str(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise TypeError(f"{key} must be a non-empty string")
    return value
