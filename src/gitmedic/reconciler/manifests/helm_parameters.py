"""An Argo CD Application's ``helm.parameters``: values given as ``--set name=value``.

Argo CD passes each parameter to ``helm template`` as ``--set`` (``--set-string``
with ``forceString: true``), after every values file and the inline values, so a
parameter wins over all of them. gitmedic turns the list into one more values
layer with helm's own typing of ``--set`` values (``true``/``false`` are
booleans, ``null`` deletes the key, a base-10 integer without a leading zero is
an integer, anything else a string) and records, for each key, the line of the
parameter's ``value`` and its name: a fix restores that list item.

Only the plain form is read: a dotted name (``\\.`` for a dot inside a key) and
a scalar value. helm's list syntax (``a[0]=x``, ``{a,b}``) would need helm's
parser to reproduce exactly, so an Application using it is refused by name
rather than rendered differently from Argo CD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["Parameters", "parameter_problem", "read_parameters", "split_name"]

Key = tuple[str, ...]
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_INT64 = 2**63


@dataclass(frozen=True)
class Parameters:
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[Key, int] = field(default_factory=dict)  # 1-based line of each value
    names: dict[Key, str] = field(default_factory=dict)  # key -> the parameter's name


def parameter_problem(given: Any) -> str | None:
    """Why a ``parameters`` list cannot be read as Argo CD renders it, or None."""
    if not isinstance(given, list):
        return "helm.parameters is not a list"
    for item in given:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            return f"helm parameter {item!r} has no name"
        if any(c in name for c in "[],=") or not all(split_name(name)):
            return f"helm parameter {name!r} uses helm's list or escape syntax, which is not read"
        value = item.get("value", "")
        if not isinstance(value, str | int | float | bool):
            return f"helm parameter {name!r} has a value that is not a string"
        text = _text(value)
        if (text.startswith("{") and text.endswith("}")) or "\\" in text:
            return f"helm parameter {name!r} uses helm's list or escape syntax, which is not read"
    return None


def split_name(name: str) -> Key:
    """``a.b\\.c`` -> ``("a", "b.c")``."""
    return tuple(part.replace("\0", ".") for part in name.replace("\\.", "\0").split("."))


def read_parameters(node: yaml.Node) -> Parameters:
    """The parameters list at ``node`` as values with lines (items not read are skipped)."""
    out = Parameters()
    if not isinstance(node, yaml.SequenceNode):
        return out
    for item in node.value:
        fields = _fields(item)
        if "name" not in fields or parameter_problem([_plain(fields)]) is not None:
            continue
        name = str(fields["name"][1])
        key = split_name(name)
        force = fields.get("forceString", (0, False))[1] is True
        line, value = fields.get("value", (fields["name"][0], ""))
        _set(out.values, key, _typed(_text(value), force))
        for k in [k for k in out.lines if k[: len(key)] == key or key[: len(k)] == k]:
            del out.lines[k]  # a later parameter replaces what an earlier one set
            out.names.pop(k, None)
        out.lines[key] = line
        out.names[key] = name
    return out


def _fields(item: yaml.Node) -> dict[str, tuple[int, Any]]:
    if not isinstance(item, yaml.MappingNode):
        return {}
    return {
        str(k.value): (k.start_mark.line + 1, yaml.safe_load(yaml.serialize(v)))
        for k, v in item.value
    }


def _plain(fields: dict[str, tuple[int, Any]]) -> dict[str, Any]:
    return {k: v for k, (_, v) in fields.items()}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _typed(text: str, force_string: bool) -> Any:
    """helm's typing of a ``--set`` value (``strvals.typedVal``)."""
    if force_string:
        return text
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if text == "0":
        return 0
    if _INTEGER.match(text) and not text.startswith("0") and -_INT64 <= int(text) < _INT64:
        return int(text)
    return text


def _set(values: dict[str, Any], key: Key, value: Any) -> None:
    node = values
    for part in key[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[key[-1]] = value
