"""Apply an :class:`~.edit.Edit` to a file's text, touching only the edited document.

``apply_edit(content, edit) -> Applied`` is pure (text in, text out); writing files
is :class:`~.repo.ManifestRepo`'s job. The steps:

1. refuse a stale edit (``edit.base`` is not the blob id of ``content``);
2. cut the file into ``---`` segments (:mod:`.documents`) and find the object;
3. apply the operation twice: to plain data (PyYAML, as kubectl reads the file),
   which gives the *intended* document, and to ruamel round-trip data, which
   gives the rendering (:mod:`.render`); only the changed lines are spliced back;
4. re-parse the new segment and accept it only if it equals the intended document
   exactly (types included), else raise :class:`EditError`: a wrong file is never
   produced, whatever the YAML looked like;
5. compute the inverse against the content: the edit that restores the old value,
   carrying the old lines verbatim so undo gives back the original bytes.

Line endings (``\\r\\n``) and a byte-order mark are kept.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import yaml

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.documents import (
    Chunk,
    EditError,
    ObjectNotFound,
    blob_sha,
    chunk_identity,
    describe,
    find_object,
    same,
    split_chunks,
    split_lines,
    values_ref,
)
from gitmedic.reconciler.manifests.edit import Edit, Op, PathNotFound, StaleEdit, Verbatim
from gitmedic.reconciler.manifests.objects import add_object, remove_object
from gitmedic.reconciler.manifests.operations import Change, apply_op, inverse_of
from gitmedic.reconciler.manifests.paths import PathError
from gitmedic.reconciler.manifests.render import RoundTrip, guess_indent, rt_value, splice
from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader

__all__ = [
    "Applied",
    "EditError",
    "ObjectNotFound",
    "PathNotFound",
    "StaleEdit",
    "apply_edit",
    "common_ends",
    "same",
]


@dataclass(frozen=True)
class Applied:
    """The new file content, the exact inverse, and the changed lines (1-based, new text)."""

    content: str
    inverse: Edit
    first_line: int
    last_line: int


def apply_edit(content: str, edit: Edit) -> Applied:
    if edit.base is not None and edit.base != blob_sha(content.encode("utf-8")):
        raise StaleEdit(
            f"{edit.file} changed since the edit was computed (edit made against blob "
            f"{edit.base[:12]}, file is now {blob_sha(content.encode('utf-8'))[:12]}): "
            f"recompute the edit against the current file"
        )
    bom = content.startswith("\ufeff")
    text = content[1:] if bom else content
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    lines = split_lines(text)
    if edit.op in (Op.ADD_OBJECT, Op.REMOVE_OBJECT):
        new_lines, inverse = _object_edit(lines, edit)
    else:
        new_lines, inverse = _field_edit(lines, edit)
    out = "".join(new_lines)
    if crlf:
        out = out.replace("\n", "\r\n")
    out = "\ufeff" + out if bom else out
    first, last = _changed(lines, new_lines)
    return Applied(out, inverse.with_base(blob_sha(out.encode("utf-8"))), first, last)


def _object_edit(lines: list[str], edit: Edit) -> tuple[list[str], Edit]:
    chunks = split_chunks(lines)
    if edit.op is Op.REMOVE_OBJECT:
        index = find_object(chunks, edit.resource, edit.file)
        chunk = chunks[index]
        verbatim = Verbatim(0, 0, chunk.text)
        inverse = Edit(Op.ADD_OBJECT, edit.file, edit.resource, (), chunk.data(), index)
        return remove_object(lines, chunks, index), replace(inverse, verbatim=verbatim)
    new_lines = add_object(lines, chunks, edit)
    return new_lines, Edit(Op.REMOVE_OBJECT, edit.file, edit.resource)


def _field_edit(lines: list[str], edit: Edit) -> tuple[list[str], Edit]:
    chunks = split_chunks(lines)
    index = find_object(chunks, edit.resource, edit.file)
    chunk = chunks[index]
    what = f"{describe(edit.resource)} in {edit.file}"
    if not edit.path:
        raise PathNotFound(f"{edit.op.value} needs a path inside {what}")
    intended = copy.deepcopy(chunk.data())
    change = _apply(intended, edit, what, plain=True)
    new_chunk = _render(chunk, edit, what, intended)
    new_lines = [*lines[: chunk.start], *new_chunk, *lines[chunk.start + len(chunk.lines) :]]
    inverse = inverse_of(edit, change, chunk.data(), intended)
    inverse = replace(inverse, resource=_identity_after(new_chunk, edit, what))
    return new_lines, _with_verbatim(inverse, list(chunk.lines), new_chunk)


def _identity_after(new_chunk: list[str], edit: Edit, what: str) -> Resource:
    """The object's identity after the edit (a rename changes it); an edit that leaves
    no Kubernetes object (no apiVersion, kind or name) is refused."""
    if edit.resource == values_ref(edit.file):
        return edit.resource  # a values file has no identity to lose
    ident = chunk_identity(split_chunks(new_chunk)[0], edit.file)
    if ident is None:
        raise EditError(f"{what}: {edit.describe()} would leave no valid Kubernetes object")
    ns = ident[1] if ident[1] is not None else edit.resource.namespace
    return Resource(ident[0], ns, ident[2], edit.resource.api_version)


def _apply(root: Any, edit: Edit, what: str, *, plain: bool) -> Change:
    try:
        return apply_op(root, edit, what, _plain_value if plain else rt_value)
    except PathError as exc:
        raise PathNotFound(str(exc)) from None


def _plain_value(value: Any, _like: Any) -> Any:
    return copy.deepcopy(value)


def _render(chunk: Chunk, edit: Edit, what: str, intended: Any) -> list[str]:
    if edit.verbatim is not None:
        exact = _verbatim_candidate(chunk, edit.verbatim)
        if exact is not None and _reads_as(exact, intended):
            return exact
    rt = RoundTrip(guess_indent(chunk.body))
    data = rt.load("".join(chunk.body), what)
    before = rt.dump(data)
    _apply(data, edit, what, plain=False)
    rendered = chunk.with_body(splice(chunk.body, before, rt.dump(data)))
    if not _reads_as(rendered, intended):
        raise EditError(
            f"{what}: cannot render {edit.describe()} without changing other values "
            f"(line {chunk.start + chunk.body_start + 1}); the document's layout is too "
            f"irregular for a minimal edit"
        )
    return rendered


def _verbatim_candidate(chunk: Chunk, verbatim: Verbatim) -> list[str] | None:
    if verbatim.line + verbatim.count > len(chunk.lines):
        return None
    lines = list(chunk.lines)
    lines[verbatim.line : verbatim.line + verbatim.count] = split_lines(verbatim.text)
    return lines if len(split_chunks(lines)) == 1 else None


def _reads_as(lines: list[str], intended: Any) -> bool:
    try:
        data = yaml.load("".join(lines), Loader=ValueAsStrLoader)
    except yaml.YAMLError:
        return False
    return same(data, intended)


def _with_verbatim(inverse: Edit, old: list[str], new: list[str]) -> Edit:
    """Attach the old lines that the new lines replaced (common prefix/suffix trimmed)."""
    prefix, suffix = common_ends(old, new)
    text = "".join(old[prefix : len(old) - suffix])
    verbatim = Verbatim(prefix, len(new) - prefix - suffix, text)
    return replace(inverse, verbatim=verbatim)


def _changed(old: list[str], new: list[str]) -> tuple[int, int]:
    prefix, suffix = common_ends(old, new)
    return prefix + 1, max(prefix + 1, len(new) - suffix)


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix
