"""A small reader and writer of playbook field paths, for the playbook tests.

The syntax of fix paths: dotted keys, ``[N]`` list indexes, ``[name=value]`` list
items by a key, and ``["key.with.dots"]`` map keys. ``restore`` does what the
responder does with a bound path: give the field its value in a known-good
object (removing it where the good object has none).
"""

from __future__ import annotations

import copy
import re
from typing import Any

_STEP = re.compile(
    r"\.?(?P<key>[A-Za-z0-9_$-]+)|\[(?P<index>\d+)\]|\[(?P<match>[A-Za-z_]+)=(?P<value>[^\]]+)\]"
    r'|\["(?P<quoted>[^"]+)"\]'
)
MISSING = object()
Step = str | int | tuple[str, str]


def parse(path: str) -> list[Step]:
    steps: list[Step] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"bad field path {path!r} at {pos}")
        if m["index"] is not None:
            steps.append(int(m["index"]))
        elif m["match"] is not None:
            steps.append((m["match"], m["value"]))
        else:
            steps.append(m["key"] or m["quoted"])
        pos = m.end()
    return steps


def _child(node: Any, step: Step) -> Any:
    if isinstance(step, int):
        return node[step] if isinstance(node, list) and step < len(node) else MISSING
    if isinstance(step, tuple):
        key, value = step
        items = node if isinstance(node, list) else []
        return next((i for i in items if isinstance(i, dict) and i.get(key) == value), MISSING)
    return node.get(step, MISSING) if isinstance(node, dict) else MISSING


def get(obj: Any, path: str) -> Any:
    node = obj
    for step in parse(path):
        node = _child(node, step)
        if node is MISSING:
            return MISSING
    return node


def restore(target: dict[str, Any], good: dict[str, Any], path: str) -> None:
    """Set ``path`` of ``target`` to its value in ``good``, or remove it."""
    value = get(good, path)
    *parents, last = parse(path)
    node: Any = target
    for i, step in enumerate(parents):
        child = _child(node, step)
        if child is MISSING:
            if value is MISSING:
                return
            child = _create(node, step, parents[i + 1] if i + 1 < len(parents) else last)
        node = child
    _assign(node, last, value)
    if value is MISSING:
        _prune(target, good, parents)


def _prune(target: dict[str, Any], good: dict[str, Any], parents: list[Step]) -> None:
    """Drop maps a removal left empty where the good object has nothing either."""
    while parents:
        holder = target
        for step in parents[:-1]:
            holder = _child(holder, step)
        here = _child(holder, parents[-1])
        if here != {} or get_steps(good, parents) is not MISSING or not isinstance(holder, dict):
            return
        holder.pop(parents[-1])  # type: ignore[call-overload]
        parents = parents[:-1]


def get_steps(obj: Any, steps: list[Step]) -> Any:
    node = obj
    for step in steps:
        node = _child(node, step)
        if node is MISSING:
            return MISSING
    return node


def _create(node: Any, step: Step, following: Step) -> Any:
    fresh: Any = [] if isinstance(following, int | tuple) else {}
    if isinstance(step, tuple):
        fresh = {step[0]: step[1]}
        node.append(fresh)
    elif isinstance(step, int):
        raise ValueError("cannot create a list item by index")
    else:
        node[step] = fresh
    return fresh


def _assign(node: Any, step: Step, value: Any) -> None:
    if isinstance(step, tuple):
        old = _child(node, step)
        if old is not MISSING:
            node.remove(old)
        if value is not MISSING:
            node.append(copy.deepcopy(value))
    elif isinstance(step, int):
        if value is MISSING:
            del node[step]
        else:
            node[step] = copy.deepcopy(value)
    elif value is MISSING:
        node.pop(step, None)
    else:
        node[step] = copy.deepcopy(value)
