"""Markdown templates shipped under ``gitmedic/bot/templates/``, filled with ``$name`` fields.

:class:`string.Template` on purpose: a template holds the fixed anatomy of a
body and nothing else (no loops, no logic), so what varies is computed and
tested in Python, and a missing field is an error rather than an empty hole.
"""

from __future__ import annotations

import functools
import string
from importlib import resources

from gitmedic.bot.render.untrusted import untrusted


@functools.cache
def template(name: str) -> string.Template:
    text = (resources.files("gitmedic.bot") / "templates" / name).read_text(encoding="utf-8")
    return string.Template(text)


def fill(name: str, **fields: str) -> str:
    """Template ``name`` with every ``$field`` filled (KeyError names a missing one)."""
    return template(name).substitute(fields)


def cell(text: str) -> str:
    """``text`` safe inside one Markdown table cell: no row breaks, no hidden markers, no
    HTML, image or mention of its own (:func:`~.untrusted.untrusted`)."""
    flat = "<br>".join(untrusted(line.strip()) for line in text.strip().splitlines())
    return flat.replace("|", "\\|") or "-"


def prose(text: str) -> str:
    """``text`` that cannot open an HTML comment, so it can never forge a hidden marker."""
    return text.replace("<!--", "&lt;!--")
