"""A generalised field rule (:class:`~.fixshape.Rule`) as a CEL match expression.

The rule's pattern walks from the object (or, for any workload, from its pod
template spec, the ``podSpec`` variable) through keys and list wildcards to one
field; the expression yields one map per place the predicate holds, holding the
wildcards' bindings (``container``, ``env``, ...) and ``field_path``, so the
learned playbook's recipe binds them. For example, a readiness probe missing on
any container::

    has(podSpec.containers) ? podSpec.containers.filter(v1, type(v1) == map &&
      has(v1.name)).map(v1, !has(v1.readinessProbe) ? [{"container": v1.name,
      "field_path": "containers[name=" + v1.name + "].readinessProbe"}] : []) : []

An index wildcard cannot be written (CEL's macros give no index), nor can a
value: only ``present``, ``absent`` and a boolean ``equals`` are rules, so a
learned rule matches the fault class, never the incident's bad value.
"""

from __future__ import annotations

import json

from gitmedic.bot.memory.fixshape import WORKLOAD, PatternSeg, Rule, Wild
from gitmedic.detectors.snapshot import WORKLOAD_KINDS

# CEL's reserved words: a key spelled like one is selected as ``node["key"]``.
RESERVED = frozenset(
    [
        "as",
        "break",
        "const",
        "continue",
        "else",
        "false",
        "for",
        "function",
        "if",
        "import",
        "in",
        "let",
        "loop",
        "package",
        "namespace",
        "null",
        "return",
        "true",
        "var",
        "void",
        "while",
    ]
)


class Inexpressible(ValueError):
    """The rule has no CEL form (an index wildcard, a non-boolean value)."""


def reads(rule: Rule) -> tuple[str, ...]:
    return tuple(sorted(WORKLOAD_KINDS)) if rule.scope == WORKLOAD else (rule.scope,)


def match_expression(rule: Rule) -> str:
    if rule.predicate == "equals" and not isinstance(rule.bad, bool):
        raise Inexpressible("only a boolean value may be a rule's literal")
    if rule.predicate not in ("present", "absent", "equals"):
        raise Inexpressible(f"no CEL form for the predicate {rule.predicate!r}")
    root = "podSpec" if rule.scope == WORKLOAD else "object"
    return _walk(root, rule.pattern, [], '""', rule, 0)


def _walk(
    node: str, pattern: tuple[PatternSeg, ...], binds: list[str], path: str, rule: Rule, depth: int
) -> str:
    keys: list[str] = []
    rest = pattern
    while rest and isinstance(rest[0], str):
        keys.append(rest[0])
        rest = rest[1:]
    if not rest:
        return _leaf(node, keys, binds, path, rule)
    wild = rest[0]
    assert isinstance(wild, Wild)
    if not wild.field:
        raise Inexpressible("an index wildcard has no CEL form")
    parents = _chain(node, keys)
    items = parents[-1]
    var = f"v{depth + 1}"
    if not _plain(wild.field):
        raise Inexpressible(f"list items selected by {wild.field!r}")
    where = f"type({var}) == map && has({var}.{wild.field})"
    if wild.value:
        where += f" && {var}.{wild.field} == {json.dumps(wild.value)}"
    here = _path(path, keys)
    item_path = f'{here} + "[{wild.field}=" + {var}.{wild.field} + "]"'
    more = [*binds, f'"{wild.bind}": {var}.{wild.field}'] if wild.bind else binds
    inner = _walk(var, rest[1:], more, item_path, rule, depth + 1)
    guard = " && ".join(_has(p) for p in parents)
    return f"{guard} ? {items}.filter({var}, {where}).map({var}, {inner}) : []"


def _leaf(node: str, keys: list[str], binds: list[str], path: str, rule: Rule) -> str:
    if not keys:
        raise Inexpressible("the pattern ends in a list item, not a field")
    chain = _chain(node, keys)
    parents = " && ".join(_has(p) for p in chain[:-1]) or "true"
    field = chain[-1]
    hit = "[{" + ", ".join([*binds, f'"field_path": {_path(path, keys)}']) + "}]"
    if rule.predicate == "present":
        cond = f"{parents} && {_has(field)}"
    elif rule.predicate == "absent":
        cond = f"{parents} && !({_has(field)})"
    else:
        cond = f"{parents} && {_has(field)} && {field} == {json.dumps(rule.bad)}"
    return f"{cond} ? {hit} : []"


def _chain(node: str, keys: list[str]) -> list[str]:
    """``node.a``, ``node.a.b``, ...: each prefix of the key path (quoted where needed)."""
    out, current = [], node
    for key in keys:
        current = f"{current}.{key}" if _plain(key) else f"{current}[{json.dumps(key)}]"
        out.append(current)
    return out


def _has(accessor: str) -> str:
    """CEL's presence test for ``accessor`` (``has()`` takes a field selection only)."""
    if accessor.endswith("]"):
        parent, _, key = accessor[:-1].rpartition("[")
        return f"{key} in {parent}"
    return f"has({accessor})"


def _plain(key: str) -> bool:
    return key.isidentifier() and key.isascii() and key not in RESERVED


def _path(path: str, keys: list[str]) -> str:
    if not keys:
        return path
    tail = ".".join(keys)
    if path == '""':
        return json.dumps(tail)
    return f'{path} + ".{tail}"'
