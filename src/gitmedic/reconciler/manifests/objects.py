"""Whole-document edits: add an object's ``---`` segment to a file, or remove it.

Removing cuts the object's segment (its ``---`` line, head comments and body);
the file's other bytes stay. Adding inserts a segment before the ``index``-th
segment (default: at the end), with the ``---`` separators the neighbours need.
The text added is ``edit.verbatim.text`` when given (how a removed object comes
back byte for byte, and how "restore this object as it was at revision R" works),
else ``edit.value`` rendered as block YAML in the file's own indentation.
"""

from __future__ import annotations

import re
from typing import Any

from gitmedic.reconciler.manifests.documents import (
    Chunk,
    EditError,
    chunk_identity,
    describe,
    same,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.render import RoundTrip, guess_indent, rt_value

__all__ = ["add_object", "remove_object"]

_MARKER = re.compile(r"^---(?:[ \t]|$)")


def remove_object(lines: list[str], chunks: list[Chunk], index: int) -> list[str]:
    chunk = chunks[index]
    return [*lines[: chunk.start], *lines[chunk.start + len(chunk.lines) :]]


def add_object(lines: list[str], chunks: list[Chunk], edit: Edit) -> list[str]:
    what = f"{describe(edit.resource)} in {edit.file}"
    if any(_declares(c, edit) for c in chunks):
        raise EditError(f"{what} already exists; edit it instead of adding it")
    index = len(chunks) if edit.index is None else edit.index
    if not 0 <= index <= len(chunks):
        raise EditError(f"{what}: cannot add a document at position {index} of {len(chunks)}")
    new = _segment(edit, chunks)
    segments = split_chunks(new)
    if len(segments) != 1 or not _declares(segments[0], edit):
        raise EditError(f"the text added for {what} does not declare exactly that object")
    if edit.value is not None and not _same_data(segments[0], edit.value):
        raise EditError(f"the text added for {what} does not read back as its value")
    at = chunks[index].start if index < len(chunks) else len(lines)
    before, after = list(lines[:at]), list(lines[at:])
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    if not _MARKER.match(new[0]) and any(c.body_start < c.body_end for c in chunks[:index]):
        new.insert(0, "---\n")
    if after and not _MARKER.match(after[0]):
        new.append("---\n")
    return [*before, *new, *after]


def _segment(edit: Edit, chunks: list[Chunk]) -> list[str]:
    if edit.verbatim is not None:
        new = split_lines(edit.verbatim.text)
    elif isinstance(edit.value, dict):
        new = _render(edit.value, chunks)
    else:
        raise EditError(f"add_object of {describe(edit.resource)} needs the object as its value")
    if not new:
        raise EditError(f"add_object of {describe(edit.resource)} has no text")
    if not new[-1].endswith("\n"):
        new[-1] += "\n"
    return new


def _render(value: dict[str, Any], chunks: list[Chunk]) -> list[str]:
    bodies = [c.body for c in chunks if c.body_start < c.body_end]
    rt = RoundTrip(guess_indent(bodies[0] if bodies else []))
    return rt.dump(rt_value(value))


def _same_data(chunk: Chunk, value: Any) -> bool:
    return same(chunk.data(), value)


def _declares(chunk: Chunk, edit: Edit) -> bool:
    ident = chunk_identity(chunk, edit.file)
    if ident is None:
        return False
    kind, ns, name = ident
    ref = edit.resource
    return kind == ref.kind and name == ref.name and (ns is None or ns == (ref.namespace or ns))
