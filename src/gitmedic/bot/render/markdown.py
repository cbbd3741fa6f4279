"""One Markdown table cell of text gitmedic did not write, shown exactly as written.

A cell's text comes from the repository, the cluster or a person (a field's value,
a finding's message, a file name), and GitHub renders it as GitHub Flavored
Markdown, so any of it may try to:

- end the cell or the row: ``|`` splits the cell, a line break ends the row
  (the whole table, after a blank line); every run of white space, line and
  paragraph separators included, becomes one space;
- take effect as markup: an ``<img>`` or ``<!-- -->`` of its own, a link or an
  image, a code span, emphasis or strikethrough that hides or changes characters.
  ``&`` and ``<`` are written as HTML entities (no tag, comment, autolink or entity
  trick; without a ``<`` a ``>`` is plain text); `` \\ ` * ~ `` are backslash-escaped
  everywhere, ``_`` where it could open or close emphasis (not inside a word, as in
  ``CART_SERVICE_ADDR``), ``](`` where it would make a link and ``![`` (a
  lone ``[0]`` makes none: a reference needs a definition at the start of a line,
  which a one-line cell cannot write), so each renders as itself and the raw text
  stays readable (a person, or the LLM reading ``architecture.md``, sees it too);
  ``|`` is escaped the way GFM's table reads it (``\\|``);
- notify people: ``@name`` and ``@org/team`` get a word joiner after the ``@``,
  shown the same, never a mention;
- read as other text: Unicode's bidirectional controls (a "Trojan source" reversal)
  are shown as U+FFFD.

Nothing is dropped but white space and those controls, so the rendered cell reads
as the text (tests/bot/test_markdown_cell.py renders it with markdown-it-py).
Prose (a whole line, a list item) is :func:`~gitmedic.bot.render.untrusted.untrusted`'s.
"""

from __future__ import annotations

import re

__all__ = ["cell"]

EMPTY = "-"  # an empty cell reads as nothing said, not as a missing column
# backslash-escaped: always; ``_`` but inside a word; ``]`` before ``(`` (an inline link),
# and ``[`` after ``!`` (no ``![`` in the raw text either, as untrusted() writes it)
_PUNCTUATION = re.compile(r"[\\`*~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\](?=\()|(?<=!)\[")
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")  # not in an e-mail address
_WORD_JOINER = "\u2060"
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def cell(text: object, *, limit: int = 0) -> str:
    """``text`` on one line, inert and reading as written, for one cell of a Markdown
    table; at most ``limit`` characters of it (0: all), the cut said with "…"."""
    flat = " ".join(_BIDI.sub("\ufffd", str(text)).split())
    if limit and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    escaped = _PUNCTUATION.sub(lambda m: "\\" + m[0], flat)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;")
    return _MENTION.sub("@" + _WORD_JOINER, escaped) or EMPTY
