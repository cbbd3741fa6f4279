"""The table of changed fields in a fix PR: file, field, before, after (as Renovate shows).

A reviewer should not have to open the diff to see that ``targetPort`` goes from
9556 back to 9555. Each edit becomes one row; "before" is read from the file at
the PR's base, so it is what main holds, not what the proposer believed. A
value that cannot be read back (the file or the object is gone) says so in its
cell rather than showing nothing: an empty "before" would read as "the field
was absent".

Every value is repository text (hostile): it is redacted (only masked secrets
are ever shown), shortened, and escaped with
:func:`~gitmedic.bot.render.markdown.cell`, so a value can neither break the table,
nor render HTML or Markdown, nor mention anyone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from gitmedic.bot.render.markdown import cell
from gitmedic.reconciler.manifests.documents import (
    EditError,
    describe,
    find_object,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import format_path, lookup
from gitmedic.reconciler.redact import redact_text

MAX_VALUE = 120  # characters of one value shown in a cell (the diff has the rest)
ABSENT = "(absent)"
REMOVED = "(removed)"

# The file's text at the PR's base, or None when it does not exist there.
Reader = Callable[[str], str | None]


@dataclass(frozen=True)
class FieldChange:
    file: str
    field: str  # the object and the path in it, e.g. "Service adservice: spec.ports[0]"
    before: str
    after: str


def field_changes(edits: Iterable[Edit], read: Reader) -> tuple[FieldChange, ...]:
    """One row per edit, "before" as ``read`` gives the file at the base."""
    return tuple(_row(e, read) for e in edits)


def changes_table(changes: Iterable[FieldChange]) -> str:
    rows = [
        f"| {cell(c.file)} | {cell(c.field)} | {cell(c.before)} | {cell(c.after)} |"
        for c in changes
    ]
    if not rows:
        return "_This PR changes no manifest field._"
    head = "| File | Field | Before | After |\n|---|---|---|---|\n"
    return head + "\n".join(rows)


def _row(edit: Edit, read: Reader) -> FieldChange:
    what = describe(edit.resource)
    if edit.op is Op.ADD_OBJECT:
        return FieldChange(edit.file, what, ABSENT, "(new object)")
    if edit.op is Op.REMOVE_OBJECT:
        return FieldChange(edit.file, what, "(whole object)", REMOVED)
    field = f"{what}: {format_path(edit.path)}"
    before = _before(edit, read)
    if edit.op is Op.REMOVE:
        return FieldChange(edit.file, field, before, REMOVED)
    if edit.op is Op.APPEND:
        return FieldChange(edit.file, field, before, f"{before} + {show(edit.value)}")
    return FieldChange(edit.file, field, before, show(edit.value))


def _before(edit: Edit, read: Reader) -> str:
    try:
        text = read(edit.file)
        if text is None:
            return f"(no file {edit.file} on the base)"
        chunks = split_chunks(split_lines(text))
        data = chunks[find_object(chunks, edit.resource, edit.file)].data()
    except (EditError, OSError, ValueError, yaml.YAMLError) as exc:
        return f"(could not be read: {exc})"
    found, value = lookup(data, edit.path)
    return show(value) if found else ABSENT


def show(value: Any) -> str:
    """A value as YAML would read it back: strings bare, the rest as compact JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = redact_text(text)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"
