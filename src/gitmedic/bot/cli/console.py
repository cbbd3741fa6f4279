"""The demo's terminal output: a line with a few styles, a titled rule, a table.

The demo is the only command that styles its output, and it needs three things,
so the core install does not carry a rendering library for them (rich and
Pygments were 13 MB and two packages of a CI install that never prints them).
Markup is the small subset the demo writes: ``[bold]``, ``[dim]``, ``[cyan]``,
``[magenta]`` and ``[/]`` (end the innermost style). Styles are ANSI escapes only
on a terminal and only without ``NO_COLOR`` (https://no-color.org); otherwise the
markup is dropped. Text from outside (commit messages, finding text) goes through
:func:`literal` first, so a ``[`` in it is never taken for markup.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from typing import TextIO

STYLES = {"bold": "1", "dim": "2", "cyan": "36", "magenta": "35"}
_TAG = re.compile(r"\[(/|bold|dim|cyan|magenta)\]")
_ESCAPED = "\x00"  # stands for a literal "[" until the markup is rendered


def literal(text: str) -> str:
    """``text`` shown as it is, whatever brackets it holds."""
    return text.replace("[", _ESCAPED)


def render(markup: str, color: bool) -> str:
    """The markup as ANSI escapes (``color``) or as plain text."""
    out: list[str] = []
    stack: list[str] = []
    pos = 0
    for match in _TAG.finditer(markup):
        out.append(markup[pos : match.start()])
        pos = match.end()
        tag = match.group(1)
        if tag == "/":
            if stack:
                stack.pop()
        else:
            stack.append(STYLES[tag])
        if color:
            out.append("\x1b[0m" + "".join(f"\x1b[{code}m" for code in stack))
    out.append(markup[pos:])
    if color and stack:
        out.append("\x1b[0m")
    return "".join(out).replace(_ESCAPED, "[")


class Console:
    """Writes to ``stream`` (stdout), styled when it is a terminal and NO_COLOR is unset."""

    def __init__(self, stream: TextIO | None = None, color: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        if color is None:
            color = self.stream.isatty() and not os.environ.get("NO_COLOR")
        self.color = color

    def print(self, markup: str = "") -> None:
        self.stream.write(render(markup, self.color) + "\n")
        self.stream.flush()

    def rule(self, title: str) -> None:
        """A full-width line with ``title`` in its middle, as a section heading."""
        width = min(shutil.get_terminal_size((88, 24)).columns, 120)
        side = max(width - len(title) - 2, 4)
        left = side // 2
        self.print(f"{'─' * left} [bold]{literal(title)}[/] {'─' * (side - left)}")

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Columns padded to their widest cell, under a bold header."""
        widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(literal(c).ljust(w) for c, w in zip(cells, widths, strict=True))

        self.print(f"[bold]{literal(title)}[/]")
        self.print(f"[bold]{line(columns)}[/]")
        self.print("  ".join("─" * w for w in widths))
        for row in rows:
            self.print(line(row))
