"""Typed reads from an object body, for the health functions.

gitops-engine converts an object to its typed Go struct before judging it; a
field of the wrong type makes that conversion fail and the health Unknown with
the error. These readers play the same role: an absent field gives the zero
value (as Go's would), a present field of the wrong type raises ``Malformed``,
which the dispatcher turns into Unknown with the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON = Mapping[str, Any]


class Malformed(ValueError):
    """A field has the wrong type for its kind."""


def _walk(body: JSON, path: tuple[str, ...]) -> Any:
    node: Any = body
    for i, key in enumerate(path):
        if node is None:
            return None
        if not isinstance(node, Mapping):
            raise Malformed(f"{'.'.join(path[:i]) or 'object'} is not a mapping")
        node = node.get(key)
    return node


def mapping(body: JSON, *path: str) -> JSON:
    value = _walk(body, path)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise Malformed(f"{'.'.join(path)} is not a mapping")
    return value


def integer(body: JSON, *path: str, default: int = 0) -> int:
    value = _walk(body, path)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{'.'.join(path)} is not an integer: {value!r}")
    return value


def optional_integer(body: JSON, *path: str) -> int | None:
    """An integer field where absent and zero differ (``spec.replicas``)."""
    if _walk(body, path) is None:
        return None
    return integer(body, *path)


def string(body: JSON, *path: str) -> str:
    value = _walk(body, path)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Malformed(f"{'.'.join(path)} is not a string: {value!r}")
    return value


def boolean(body: JSON, *path: str) -> bool:
    value = _walk(body, path)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Malformed(f"{'.'.join(path)} is not a boolean: {value!r}")
    return value


def items(body: JSON, *path: str) -> list[JSON]:
    """A list of mappings (conditions, container statuses); absent gives []."""
    value = _walk(body, path)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise Malformed(f"{'.'.join(path)} is not a list of mappings")
    return value


def condition(body: JSON, kind: str) -> JSON | None:
    """The first ``status.conditions`` entry of a type, or None."""
    for cond in items(body, "status", "conditions"):
        if cond.get("type") == kind:
            return cond
    return None


def annotations_of(body: JSON) -> JSON:
    return mapping(body, "metadata", "annotations")
