"""A manifest file as a sequence of document texts, so an edit can touch only one of them.

The file is cut at every ``---`` line (a document marker at column 0; YAML forbids
one inside a flow scalar, and block scalar lines are always indented). Each
:class:`Chunk` keeps its exact text and splits it into

- ``head``: the marker line and the blank and comment lines before the first key,
- ``body``: the YAML a round-trip parser gets to see,
- ``tail``: trailing blank lines and column-0 comments (they usually introduce the
  next document; ruamel would glue them to the last key of this one).

Only the body is ever re-emitted; head and tail are copied byte for byte, which is
how the "comment attached to the last key of the previous document", the leading
``---`` and the trailing ``---`` pitfalls of whole-stream round-tripping disappear.
Line endings are normalised to ``\\n`` while editing and restored on output.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from dataclasses import dataclass
from typing import Any

import yaml

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.parse import is_list_kind, object_name, parse_text
from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader

__all__ = [
    "Chunk",
    "EditError",
    "ObjectNotFound",
    "blob_sha",
    "find_object",
    "join_lines",
    "same",
    "split_chunks",
    "split_lines",
    "values_ref",
]

# The pseudo-kind of a values file's document: no Kubernetes object has this apiVersion.
VALUES_KIND, VALUES_API = "HelmValues", "values.gitmedic.io/v1"
_MARKER = re.compile(r"^---(?:[ \t]|$)")


class EditError(Exception):
    """An edit that cannot be applied; nothing was changed."""


class ObjectNotFound(EditError):
    """The object an edit names is not in the file."""


def blob_sha(data: bytes) -> str:
    """Git's blob id of ``data`` (what ``git hash-object`` prints), used to detect stale edits."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept; only ``\\n`` ends a line (unlike ``str.splitlines``)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def join_lines(lines: list[str]) -> str:
    return "".join(lines)


def _is_note(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#") or stripped.startswith("%")


@dataclass(frozen=True)
class Chunk:
    """One ``---``-separated segment of a file: head + body + tail lines."""

    start: int  # 0-based line of the chunk in the file
    lines: tuple[str, ...]
    body_start: int  # index into lines
    body_end: int

    @property
    def head(self) -> list[str]:
        return list(self.lines[: self.body_start])

    @property
    def body(self) -> list[str]:
        return list(self.lines[self.body_start : self.body_end])

    @property
    def tail(self) -> list[str]:
        return list(self.lines[self.body_end :])

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def with_body(self, body: list[str]) -> list[str]:
        return [*self.head, *body, *self.tail]

    def data(self) -> Any:
        """The chunk as plain data (PyYAML, as the loader and kubectl read it)."""
        return yaml.load(self.text, Loader=ValueAsStrLoader)


def split_chunks(lines: list[str]) -> list[Chunk]:
    starts = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = [*starts, len(lines)]
    return [_chunk(lines, a, b) for a, b in itertools.pairwise(bounds)]


def _chunk(lines: list[str], a: int, b: int) -> Chunk:
    part = lines[a:b]
    i = 0
    while i < len(part) and (_MARKER.match(part[i]) or _is_note(part[i]) or part[i] == "\ufeff"):
        i += 1
    j = len(part)
    while j > i and (not part[j - 1].strip() or part[j - 1].startswith("#")):
        j -= 1
    return Chunk(a, tuple(part), i, j)


@functools.lru_cache(maxsize=4096)
def chunk_identity(chunk: Chunk, file: str) -> tuple[str, str | None, str] | None:
    """(kind, namespace or None, name) of the single object a chunk declares."""
    if chunk.body_start == chunk.body_end:
        return None
    parsed = parse_text(chunk.text, file)
    if len(parsed.objects) != 1 or is_list_kind(parsed.objects[0].body):
        return None
    body = parsed.objects[0].body
    meta = body["metadata"]
    ns = meta.get("namespace")
    return str(body["kind"]), (str(ns) if ns else None), object_name(meta)


def values_ref(file: str) -> Resource:
    """A Helm values file as the one "object" an edit addresses (its keys are the paths)."""
    return Resource(VALUES_KIND, "", file, VALUES_API)


def find_object(chunks: list[Chunk], ref: Resource, file: str) -> int:
    """Index of the chunk declaring ``ref``. An object that names no namespace
    matches any namespace (the loader gives it the default one). A values file's
    "object" (:func:`values_ref`) is its one document."""
    if ref.kind == VALUES_KIND and ref.api_version == VALUES_API:
        return _values_document(chunks, file)
    exact: list[int] = []
    loose: list[int] = []
    for i, chunk in enumerate(chunks):
        if not _may_declare(chunk, ref):
            continue
        ident = chunk_identity(chunk, file)
        if ident is None or ident[0] != ref.kind or ident[2] != ref.name:
            continue
        if ident[1] == (ref.namespace or None):
            exact.append(i)
        elif ident[1] is None or not ref.namespace:
            loose.append(i)
    found = exact or loose
    if len(found) > 1:
        raise EditError(f"{file}: {_name(ref)} is declared {len(found)} times")
    if not found:
        raise ObjectNotFound(f"{file}: no {_name(ref)} in this file")
    return found[0]


def _values_document(chunks: list[Chunk], file: str) -> int:
    filled = [i for i, c in enumerate(chunks) if c.body_start != c.body_end]
    if len(filled) > 1:
        raise EditError(f"{file}: a values file holds one YAML document, not {len(filled)}")
    if not filled or not isinstance(chunks[filled[0]].data(), dict):
        raise ObjectNotFound(f"{file}: no values mapping in this file")
    return filled[0]


def _may_declare(chunk: Chunk, ref: Resource) -> bool:
    """A cheap test before parsing: the kind on a top-level line and the name somewhere."""
    kind = re.compile(rf"^kind:[ \t]*[\"']?{re.escape(ref.kind)}[\"']?[ \t]*(?:#.*)?$")
    body = chunk.lines[chunk.body_start : chunk.body_end]
    return any(kind.match(line) for line in body) and any(ref.name in line for line in body)


def _name(ref: Resource) -> str:
    if ref.kind == VALUES_KIND and ref.api_version == VALUES_API:
        return f"values file {ref.name}"
    ns = f"{ref.namespace}/" if ref.namespace else ""
    return f"{ref.kind} {ns}{ref.name}"


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types (``1 != True != 1.0`` here, unlike in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def describe(ref: Resource) -> str:
    return _name(ref)
