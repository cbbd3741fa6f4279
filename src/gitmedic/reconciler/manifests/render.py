"""Render one edited document so that only the lines of the change differ.

ruamel.yaml round-trips comments, key order and quoting, but not every byte: of
the 449 documents of the eight real apps, 281 come back different (trailing
spaces, blank lines holding spaces, mixed indentation inside one document, ``{}``
on its own line, ``null`` spelled out). So the edited document is never written
as ruamel emits it. Instead:

1. ``before`` = ruamel's emission of the unedited body, ``after`` = its emission
   of the edited body, both with the indentation guessed for this document
   (indentation is global per dump, hence guessed per document, not per file);
2. the line diff ``before -> after`` is the change, in ruamel's normalised space;
3. each changed region is mapped back to the original lines through an alignment
   of ``before`` with the original that ignores surrounding whitespace, and the new
   lines are re-indented by the offset of the nearest aligned sibling or parent.

Full-line comments ruamel drops with a removed key (it stores them on that key)
are kept: they describe what follows. The caller re-parses the result and refuses
any edit whose document does not read back as exactly the intended value.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from gitmedic.reconciler.manifests.documents import EditError

__all__ = ["Indent", "RoundTrip", "guess_indent", "rt_value", "splice"]

_STYLED = (
    DoubleQuotedScalarString,
    SingleQuotedScalarString,
    LiteralScalarString,
    FoldedScalarString,
)
_RESOLVER = yaml.resolver.Resolver()


@dataclass(frozen=True)
class Indent:
    mapping: int = 2
    offset: int = 0  # columns between a sequence's parent key and its "-"

    @property
    def sequence(self) -> int:
        return self.offset + 2


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def guess_indent(body: list[str]) -> Indent:
    """The most common mapping indent and sequence offset of a document."""
    maps: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    prev: tuple[int, str] | None = None
    for line in body:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        col = _indent_of(line)
        if prev is not None and prev[1].endswith(":"):
            base = prev[0] + (2 if prev[1].startswith("- ") else 0)
            if text.startswith("- ") or text == "-":
                offsets[col - base] += 1
            elif col > base:
                maps[col - base] += 1
        prev = (col, text)
    mapping = maps.most_common(1)[0][0] if maps else 2
    offset = offsets.most_common(1)[0][0] if offsets else 0
    return Indent(max(mapping, 1), max(offset, 0))


class RoundTrip:
    """ruamel.yaml configured for one document: its indentation, quotes kept, no re-wrapping."""

    def __init__(self, indent: Indent) -> None:
        self.yaml = YAML(typ="rt")
        self.yaml.preserve_quotes = True
        self.yaml.width = 1 << 20  # never re-wrap long lines
        self.yaml.indent(mapping=indent.mapping, sequence=indent.sequence, offset=indent.offset)

    def load(self, text: str, where: str) -> Any:
        try:
            return self.yaml.load(text)
        except YAMLError as exc:
            raise EditError(
                f"{where}: the round-trip parser rejects this document: {exc}"
            ) from None

    def dump(self, data: Any) -> list[str]:
        out = io.StringIO()
        self.yaml.dump(data, out)
        text = out.getvalue()
        return [line + "\n" for line in text.split("\n")][:-1] if text else []


def _needs_quotes(value: str) -> bool:
    """Strings that YAML 1.1 readers (kubectl, PyYAML) would read as something else."""
    if not value or "\n" in value:
        return False
    tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    return bool(tag != "tag:yaml.org,2002:str")


def rt_value(value: Any, like: Any = None) -> Any:
    """A JSON value as ruamel round-trip data, styled like the value it replaces."""
    if isinstance(value, str):
        if isinstance(like, _STYLED):
            if isinstance(like, LiteralScalarString | FoldedScalarString) and "\n" not in value:
                return DoubleQuotedScalarString(value) if _needs_quotes(value) else value
            return type(like)(value)
        return DoubleQuotedScalarString(value) if _needs_quotes(value) else value
    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[rt_key(k)] = rt_value(v, like.get(k) if isinstance(like, dict) else None)
        if isinstance(like, CommentedMap) and like and like.fa.flow_style():
            out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        first = like[0] if isinstance(like, list) and like else None
        seq = CommentedSeq(rt_value(v, first) for v in value)
        if isinstance(like, CommentedSeq) and like and like.fa.flow_style():
            seq.fa.set_flow_style()
        return seq
    return value


def rt_key(key: Any) -> Any:
    """A mapping key as ruamel will write it: quoted when YAML 1.1 would read it as
    something else (``no``, ``on``, ``1e3``...), so kubectl sees the same key."""
    if isinstance(key, str) and _needs_quotes(key):
        return DoubleQuotedScalarString(key)
    return key


def splice(original: list[str], before: list[str], after: list[str]) -> list[str]:
    """``original`` with the change ``before -> after`` applied to its own lines."""
    unterminated = bool(original) and not original[-1].endswith("\n")
    if unterminated:  # a file without a final newline keeps lacking it
        original = [*original[:-1], original[-1] + "\n"]
    spans = _align(original, before)
    literal = _block_scalar_lines(original)
    out = list(original)
    ops = SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    for tag, b1, b2, c1, c2 in reversed(ops):
        if tag == "equal":
            continue
        if b1 < b2:
            a1, a2 = spans[b1][0], spans[b2 - 1][1]
        else:
            a1 = a2 = spans[b1][0] if b1 < len(before) else len(original)
        delta = _delta(
            original, before, spans, b1 if b1 < b2 else b1 - 1, after[c1] if c1 < c2 else ""
        )
        new = [_shift(line, delta) for line in after[c1:c2]]
        if tag == "delete":
            new = _kept_comments(out[a1:a2], literal[a1:a2])
        out[a1:a2] = new
    if unterminated and out:
        out[-1] = out[-1].removesuffix("\n")
    return out


def _align(original: list[str], before: list[str]) -> list[tuple[int, int]]:
    """For each line of ``before``, the span of ``original`` lines it stands for."""
    spans: list[tuple[int, int]] = [(0, 0)] * len(before)
    strip_o = [line.strip() for line in original]
    strip_b = [line.strip() for line in before]
    ops = SequenceMatcher(None, strip_o, strip_b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        for j in range(j1, j2):
            spans[j] = (i1 + (j - j1), i1 + (j - j1) + 1) if tag == "equal" else (i1, i2)
    return spans


def _delta(
    original: list[str], before: list[str], spans: list[tuple[int, int]], b: int, first: str
) -> int:
    """Indentation offset between original and ruamel near ``before[b]``: taken from the
    closest sibling at the new text's level (before, then after it), else from a parent."""
    level, item = _indent_of(first), first.lstrip().startswith("-")
    parent: int | None = None
    for j in range(min(b, len(before) - 1), -1, -1):  # b may be -1: nothing before
        kind = _level(before[j], level, item)
        if kind == "sibling" and _paired(original, before, spans, j):
            return _offset(original, before, spans, j)
        if kind == "parent":
            parent = j if _paired(original, before, spans, j) else None
            break
    for j in range(b + 1, len(before)):
        kind = _level(before[j], level, item)
        if kind == "parent":
            break
        if kind == "sibling" and _paired(original, before, spans, j):
            return _offset(original, before, spans, j)
    return 0 if parent is None else _offset(original, before, spans, parent)


def _level(line: str, level: int, item: bool) -> str:
    if not line.strip() or line.lstrip().startswith("#") or _indent_of(line) > level:
        return "deeper"
    if _indent_of(line) < level:
        return "parent"
    if line.lstrip().startswith("-") == item:
        return "sibling"
    # ruamel writes offset 0 or more: at a key's column, a "- " line is an item of a
    # sibling key's sequence (deeper than the key), and a key line before "- " items is
    # their parent. Taking a sibling's item for a parent put the new key at the item's
    # original offset, which another sequence of the document may not share.
    return "parent" if item else "deeper"


def _paired(original: list[str], before: list[str], spans: list[tuple[int, int]], j: int) -> bool:
    a1, a2 = spans[j]
    return a2 - a1 == 1 and original[a1].strip() == before[j].strip()


def _offset(original: list[str], before: list[str], spans: list[tuple[int, int]], j: int) -> int:
    return _indent_of(original[spans[j][0]]) - _indent_of(before[j])


def _shift(line: str, delta: int) -> str:
    if delta >= 0:
        return " " * delta + line if line.strip() else line
    cut = min(-delta, _indent_of(line))
    return line[cut:]


def _kept_comments(removed: list[str], literal: list[bool]) -> list[str]:
    """Full-line comments after the last removed content line introduce what follows.

    A line inside a block scalar (``key: |``) that starts with ``#`` is text of the
    value, not a comment: it goes with the value.
    """
    last = max(
        (i for i, line in enumerate(removed) if line.strip() and not _is_comment(line)),
        default=-1,
    )
    return [
        line
        for i, line in enumerate(removed[last + 1 :], start=last + 1)
        if _is_comment(line) and not literal[i]
    ]


_BLOCK_HEADER = re.compile(r"(?:^|:\s+|-\s+)[|>][1-9+-]{0,2}\s*(?:#.*)?$")  # on a stripped line


def _block_scalar_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it is inside a block scalar's text (more indented than
    its ``|``/``>`` header, or blank before the text ends)."""
    inside: list[bool] = []
    header: int | None = None  # the header line's indentation while in a block scalar
    for line in lines:
        if header is not None and (not line.strip() or _indent_of(line) > header):
            inside.append(True)
            continue
        header = _indent_of(line) if _BLOCK_HEADER.search(line.strip()) else None
        inside.append(False)
    return inside


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")
