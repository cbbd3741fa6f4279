"""Small, private YAML text edits for the fault library: one document changes, nothing else.

A fault must look like a human's commit: the diff touches the document of the
object it breaks and leaves every other byte of the file alone. The document
holding an object is found by the object's first line (the loader's ``Source``),
re-read with ruamel.yaml in round-trip mode (comments, order and quoting kept),
changed, and dumped back with the sequence indentation that document used. The
project's general round-trip editor lives in the reconciler; this one is the
sim's own, small on purpose.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gitmedic.detectors.snapshot import Obj

_SEPARATOR = re.compile(r"^---\s*(#.*)?$")


class FaultNotApplicable(Exception):
    """The app has no object this fault can be injected into."""


def _yaml(indented_sequences: bool) -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    if indented_sequences:
        y.indent(mapping=2, sequence=4, offset=2)
    else:
        y.indent(mapping=2, sequence=2, offset=0)
    return y


def _spans(lines: list[str]) -> list[tuple[int, int]]:
    """[start, end) line ranges of the documents (separators excluded)."""
    spans, start = [], 0
    for i, line in enumerate(lines):
        if _SEPARATOR.match(line):
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(lines)))
    return spans


def _locate(root: Path, obj: Obj) -> tuple[Path, list[str], tuple[int, int]]:
    if obj.source is None:
        raise FaultNotApplicable(f"{obj.ref}: no source file to edit")
    path = root / obj.source.file
    lines = path.read_text().splitlines(keepends=True)
    line = obj.source.line - 1
    for start, end in _spans(lines):
        if start <= line < max(end, start + 1):
            return path, lines, (start, end)
    raise FaultNotApplicable(f"{obj.ref}: line {obj.source.line} is in no document")


def edit(root: Path, obj: Obj, change: Callable[[Any], None]) -> None:
    """Apply ``change`` to the object's document (a ruamel CommentedMap) in place."""
    path, lines, (start, end) = _locate(root, obj)
    text = "".join(lines[start:end])
    indented = bool(re.search(r"^\s+- ", text, re.M)) and not re.search(
        r"^(\s*)\w[^:\n]*:\n\1- ", text, re.M
    )
    y = _yaml(indented)
    doc = y.load(text)
    change(doc)
    out = io.StringIO()
    y.dump(doc, out)
    path.write_text("".join(lines[:start]) + out.getvalue() + "".join(lines[end:]))


def delete(root: Path, obj: Obj) -> None:
    """Remove the object's document (and one separator) from its file."""
    path, lines, (start, end) = _locate(root, obj)
    if start > 0:
        start -= 1  # the separator before it
    elif end < len(lines):
        end += 1  # the separator after it
    path.write_text("".join(lines[:start] + lines[end:]))


def append(root: Path, next_to: Obj, body: dict[str, Any]) -> None:
    """Add a new document to the file that holds ``next_to``."""
    if next_to.source is None:
        raise FaultNotApplicable(f"{next_to.ref}: no source file to edit")
    path = root / next_to.source.file
    text = path.read_text()
    out = io.StringIO()
    _yaml(False).dump(body, out)
    sep = "" if text.endswith("\n") else "\n"
    path.write_text(f"{text}{sep}---\n{out.getvalue()}")


def containers(doc: Any, *, init: bool = False) -> list[Any]:
    spec = doc["spec"]
    if doc["kind"] != "Pod":
        spec = spec["template"]["spec"]
    return list(spec.get("initContainers" if init else "containers") or [])


def pod_spec(doc: Any) -> Any:
    return doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
