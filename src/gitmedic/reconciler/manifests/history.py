"""Edits and answers computed from a manifest file's git history.

- :func:`restore_fields` — the edits that put fields of an object back to their
  value at revision R (set when both exist, insert at the position the field had
  at R when it is gone now, remove when it did not exist at R). A removed list
  item comes back at its old index; a missing parent comes back whole.
- :func:`restore_object` — the ``add_object`` edit that brings back an object
  deleted since R, byte for byte as it was at R, after the object that preceded
  it at R (or before the one that followed it, or at the end of the file).
- :func:`last_change` — the commit that last changed a field: walk the file's
  ``git log`` newest first and compare the field's value between consecutive
  versions of the file (a merge that only brings a branch commit in is skipped
  by git's history simplification, so the branch commit with its author is named).

Every edit records the blob id of the content it was computed against (``base``),
in order: apply them in the order returned.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.apply import apply_edit, common_ends
from gitmedic.reconciler.manifests.documents import (
    EditError,
    blob_sha,
    chunk_identity,
    describe,
    find_object,
    same,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit, Op, Verbatim
from gitmedic.reconciler.manifests.paths import Path, item_position, lookup, resolve_parent
from gitmedic.reconciler.manifests.repo import ManifestRepo

__all__ = ["last_change", "restore_fields", "restore_object"]


def restore_fields(
    repo: ManifestRepo,
    resource: Resource,
    paths: list[Path],
    rev: str,
    file: str | None = None,
    old_file: str | None = None,
) -> list[Edit]:
    """``old_file``: where the object was at ``rev``, when a later commit moved it."""
    file = file or repo.locate(resource)
    old_content = repo.read(old_file or file, rev)
    old_doc = _document_of(old_content, file, resource)
    content = repo.read(file)
    edits: list[Edit] = []
    for path in paths:
        doc = _document_of(content, file, resource)
        edit = _restore_one(doc, old_doc, file, resource, path)
        if edit is None:
            continue
        edit = _exact(edit, content, old_content, doc).with_base(blob_sha(content.encode()))
        content = apply_edit(content, edit).content
        edits.append(edit)
    return edits


def _restore_one(doc: Any, old_doc: Any, file: str, ref: Resource, path: Path) -> Edit | None:
    was, old = lookup(old_doc, path)
    now, cur = lookup(doc, path)
    if was and now:
        return None if same(old, cur) else Edit(Op.SET, file, ref, path, old)
    if now:
        return Edit(Op.REMOVE, file, ref, path)
    if not was:
        return None
    depth = next(d for d in range(1, len(path) + 1) if not lookup(doc, path[:d])[0])
    prefix = path[:depth]
    _, value = lookup(old_doc, prefix)
    old_parent = resolve_parent(old_doc, prefix, describe(ref))
    position = item_position(old_parent, prefix[-1])
    _, parent_now = lookup(doc, prefix[:-1])
    size = len(parent_now) if isinstance(parent_now, dict | list) else 0
    index = min(position or 0, size)
    if isinstance(prefix[-1], int):
        return Edit(Op.INSERT, file, ref, (*prefix[:-1], index), value)
    return Edit(Op.INSERT, file, ref, prefix, value, index)


def _exact(edit: Edit, content: str, old_content: str, doc: Any) -> Edit:
    """Attach the field's lines as they were at R, so quoting, block scalars and
    comments come back too (the edit falls back to rendering if they do not fit)."""
    if edit.op is Op.REMOVE:
        return edit
    probe = Edit(Op.SET, edit.file, edit.resource, edit.path, lookup(doc, edit.path)[1])
    if edit.op is Op.INSERT:
        probe = Edit(Op.REMOVE, edit.file, edit.resource, edit.path)
    try:
        old_text = apply_edit(old_content, probe).inverse.verbatim
    except EditError:
        return edit
    lines, new = split_lines(content), split_lines(apply_edit(content, edit).content)
    prefix, suffix = common_ends(lines, new)
    start = split_chunks(lines)[find_object(split_chunks(lines), edit.resource, edit.file)].start
    if old_text is None or prefix < start:
        return edit
    count = len(lines) - prefix - suffix
    return replace(edit, verbatim=Verbatim(prefix - start, count, old_text.text))


def restore_object(repo: ManifestRepo, resource: Resource, rev: str, file: str) -> Edit:
    if not repo.exists(file):
        raise EditError(f"{file} does not exist any more; restore the file itself")
    old_chunks = split_chunks(split_lines(repo.read(file, rev)))
    at = find_object(old_chunks, resource, file)
    content = repo.read(file)
    chunks = split_chunks(split_lines(content))
    current = [chunk_identity(c, file) for c in chunks]
    index = len(chunks)
    for before in reversed(old_chunks[:at]):
        ident = chunk_identity(before, file)
        if ident is not None and ident in current:
            index = current.index(ident) + 1
            break
    else:
        for after in old_chunks[at + 1 :]:
            ident = chunk_identity(after, file)
            if ident is not None and ident in current:
                index = current.index(ident)
                break
    chunk = old_chunks[at]
    edit = Edit(Op.ADD_OBJECT, file, resource, (), chunk.data(), index)
    return replace(edit, verbatim=Verbatim(0, 0, chunk.text), base=blob_sha(content.encode()))


def last_change(
    repo: ManifestRepo, file: str, resource: Resource, path: Path, rev: str = "HEAD"
) -> Commit | None:
    commits = repo.git.log(file, rev=rev)
    values = [repo.value_at(file, resource, path, c.sha) for c in commits]
    for i, commit in enumerate(commits):
        older = values[i + 1] if i + 1 < len(values) else (False, None)
        if values[i][0] != older[0] or not same(values[i][1], older[1]):
            return commit
    return None


def _document_of(content: str, file: str, resource: Resource) -> Any:
    chunks = split_chunks(split_lines(content))
    return chunks[find_object(chunks, resource, file)].data()
