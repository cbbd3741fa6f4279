"""Finding ``/gitmedic`` commands in a comment the way GitHub renders it (CommonMark).

The comment is parsed with markdown-it-py (a CommonMark-compliant parser, as
GitHub's own renderer is, with GFM's tables) and only *top-level paragraphs* are
read: everything GitHub shows as code (fenced or indented blocks, a fence that
is never closed, inline code) or does not show at all (HTML comments and blocks)
is skipped, and so are block quotes, list items (quoting someone's command is not
giving it) and table cells (a line right after a table's row is a cell of it, as
GitHub shows it). A paragraph between an HTML block that opens an element
(``<details>``, ``<div>``, ``<table>``) and the one that closes it is inside that
element on GitHub (a collapsed ``<details>`` hides it): it is not read either.
A paragraph is read line by line (GitHub renders each line break of a comment);
a line is a command when it is plain text from ``/gitmedic`` to its end: a line
that holds inline code, HTML or markup is not one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_NOT_TEXT = "\x00"  # stands for inline code, HTML or markup inside a paragraph's line
_COMMAND_LINE = re.compile(
    r"/gitmedic(?:[ \t]+(?P<name>[^\s\x00]+))?(?P<args>(?:[ \t][^\x00]*)?)", re.IGNORECASE
)
_BREAKS = ("softbreak", "hardbreak")
_COMMENT = re.compile(r"<!--[\s\S]*?(?:-->|$)")
_TAG = re.compile(r"<(?P<close>/)?(?P<name>[A-Za-z][A-Za-z0-9-]*)\b[^>]*?(?P<self>/)?>")
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr"}
)


@dataclass(frozen=True)
class CommandCall:
    name: str  # lower case; "" for a bare "/gitmedic"
    args: str
    line: int  # 1-based line number in the comment


def parse_commands(body: str) -> tuple[CommandCall, ...]:
    tokens = _parser().parse(body)
    calls = []
    open_elements = 0  # HTML elements opened by earlier blocks and not yet closed
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "html_block":
            open_elements = max(0, open_elements + _element_depth(opening.content))
        elif opening.type == "inline":  # "see <details>" opens an element inline
            html = [c.content for c in opening.children or () if c.type == "html_inline"]
            open_elements = max(0, open_elements + _element_depth("".join(html)))
        if opening.type != "paragraph_open" or opening.level != 0 or opening.map is None:
            continue
        if open_elements:
            continue
        for offset, line in enumerate(_lines(inline.children or ())):
            match = _COMMAND_LINE.fullmatch(line.strip())
            if match is not None:
                name = (match["name"] or "").lower()
                calls.append(CommandCall(name, match["args"].strip(), opening.map[0] + offset + 1))
    return tuple(calls)


def _lines(children: Sequence[Token]) -> Iterator[str]:
    """The paragraph's rendered lines, anything but plain text as a placeholder."""
    line: list[str] = []
    for child in children:
        if child.type in _BREAKS:
            yield "".join(line)
            line = []
        else:
            line.append(child.content if child.type == "text" else _NOT_TEXT)
    yield "".join(line)


def _element_depth(html: str) -> int:
    """How many elements an HTML block leaves open: opening tags minus closing ones
    (void elements and ``<x/>`` close themselves; comments hold no tags)."""
    html = _COMMENT.sub("", html)
    depth = 0
    for match in _TAG.finditer(html):
        name = match["name"].lower()
        if match["close"]:
            depth -= 1
        elif name not in _VOID and not match["self"]:
            depth += 1
    return depth


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")
