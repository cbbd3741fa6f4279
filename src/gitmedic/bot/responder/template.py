"""Safe placeholders for playbooks: ``{name}``, ``{name[0]}``, ``{name.key}`` and nothing else.

Playbooks may be written by an LLM (reflection), so this is deliberately not
``str.format``: no attribute access, no format specs, no calls; a placeholder
reads a finding param (or an element or key of one) and that is all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_-]*)*)\}")
_STEP = re.compile(r"\[(\d+)\]|\.([A-Za-z_][A-Za-z0-9_-]*)")


class TemplateError(ValueError):
    pass


def lookup(params: Mapping[str, Any], name: str, steps: str) -> Any:
    if name not in params:
        raise TemplateError(f"placeholder {{{name}{steps}}}: the finding has no param {name!r}")
    value = params[name]
    for index, key in _STEP.findall(steps):
        try:
            value = value[int(index)] if index else value[key]
        except (IndexError, KeyError, TypeError):
            raise TemplateError(
                f"placeholder {{{name}{steps}}}: {index or key!r} not found"
            ) from None
    return value


def expand(text: str, params: Mapping[str, Any]) -> Any:
    """Expand placeholders; a text that is exactly one placeholder keeps the value's type."""
    whole = _PLACEHOLDER.fullmatch(text)
    if whole:
        return lookup(params, whole[1], whole[2])
    if "{" in _PLACEHOLDER.sub("", text):
        raise TemplateError(f"{text!r}: only {{param}}, {{param[0]}} and {{param.key}} are allowed")
    return _PLACEHOLDER.sub(lambda m: str(lookup(params, m[1], m[2])), text)


def placeholders(text: str) -> list[str]:
    return [m[1] for m in _PLACEHOLDER.finditer(text)]
