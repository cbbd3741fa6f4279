"""A CEL expression's cost, read from the engine's own checked AST, never from its text.

Text can lie about structure: CEL skips ``//`` comments, so a comment (or a
``// \"\"\"`` pair a text lexer reads as one string) hides comprehensions from
anything that counts tokens. The engine's parse cannot be lied to: the
compiled :class:`Expression` serializes to a ``cel.expr.CheckedExpr`` (inside a
``google.protobuf.Any``), whose ``expr`` is the tree the evaluator runs, macros
already expanded into comprehensions. It is decoded here from the protobuf wire
format (a few field numbers of cel-spec's ``syntax.proto``; no protobuf runtime
needed) into :class:`Node` and measured:

- ``nodes``: the size of the tree;
- ``nesting``: comprehensions nested in the loop of another (the factor that
  multiplies);
- ``cost``: an upper bound of evaluation steps, each comprehension costing its
  loop body times the most items its range can hold. A list from the input holds
  at most ``max_list`` items (the input bound); a literal as many as it names; a
  concatenation the sum of its parts; ``map``/``filter`` no more than their range;
- ``identifiers``/``names``: the variables it reads, and every name it spells
  (identifiers, fields, loop variables), for the reserved-name check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["AstError", "Measured", "Node", "measure_checked", "parse_checked"]

# cel.expr.Expr's expr_kind fields, and the sub-messages' fields read here
_IDENT, _SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION = 4, 5, 6, 7, 8, 9
_LOOP_PARTS = ("loop_condition", "loop_step")  # run once per item of the range
_COMPREHENSION_PARTS = {
    2: "iter_range",
    4: "accu_init",
    5: "loop_condition",
    6: "loop_step",
    7: "result",
}


class AstError(ValueError):
    """The serialized expression is not the CheckedExpr this module reads."""


@dataclass
class Node:
    kind: str  # const, ident, select, call, list, struct, comprehension
    name: str = ""  # the identifier, field, function or iteration variable
    children: list[Node] = field(default_factory=list)
    parts: dict[str, Node] = field(default_factory=dict)  # of a comprehension
    loop_vars: tuple[str, ...] = ()


@dataclass(frozen=True)
class Measured:
    nodes: int
    nesting: int
    cost: int
    identifiers: frozenset[str]
    names: frozenset[str]


def parse_checked(serialized: bytes) -> Node:
    """The root of the expression tree of a serialized ``Any(CheckedExpr)``."""
    fields = dict((n, v) for n, _, v in _fields(serialized))
    checked = fields.get(2, serialized) if b"CheckedExpr" in bytes(fields.get(1, b"")) else None
    if not isinstance(checked, bytes):
        raise AstError("the engine did not give a CheckedExpr")
    expr = [v for n, _, v in _fields(checked) if n == 4]
    if not expr or not isinstance(expr[0], bytes):
        raise AstError("the CheckedExpr holds no expression")
    return _expr(expr[0])


def measure_checked(root: Node, max_list: int) -> Measured:
    names: set[str] = set()
    identifiers: set[str] = set()
    for node, bound in _walk(root, frozenset()):
        if node.name:
            names.add(node.name)
        names.update(node.loop_vars)
        if node.kind == "ident" and node.name not in bound:
            identifiers.add(node.name)
    return Measured(
        nodes=sum(1 for _ in _walk(root, frozenset())),
        nesting=_nesting(root),
        cost=_cost(root, max_list),
        identifiers=frozenset(identifiers),
        names=frozenset(names),
    )


def _walk(node: Node, bound: frozenset[str]) -> Iterator[tuple[Node, frozenset[str]]]:
    pending = [(node, bound)]
    while pending:
        current, names = pending.pop()
        yield current, names
        inner = names | set(current.loop_vars)
        pending.extend((c, inner) for c in current.children)
        pending.extend((p, inner) for p in current.parts.values())


def _nesting(node: Node) -> int:
    here = 1 if node.kind == "comprehension" else 0
    deepest = max((_nesting(c) for c in node.children), default=0)
    for name, part in node.parts.items():
        inner = _nesting(part)
        deepest = max(deepest, inner if name in _LOOP_PARTS else inner - here)
    return here + deepest


def _cost(node: Node, max_list: int) -> int:
    if node.kind != "comprehension":
        return 1 + sum(_cost(c, max_list) for c in node.children)
    parts = {name: _cost(part, max_list) for name, part in node.parts.items()}
    loop = sum(parts.get(name, 0) for name in _LOOP_PARTS)
    items = _size(node.parts["iter_range"], max_list) if "iter_range" in node.parts else 0
    return (
        1
        + parts.get("iter_range", 0)
        + parts.get("accu_init", 0)
        + items * loop
        + parts.get("result", 0)
    )


def _size(node: Node, max_list: int) -> int:
    """The most items the list or map ``node`` can evaluate to."""
    if node.kind in ("list", "struct"):
        return len(node.children)
    if node.kind == "call" and node.name == "_+_":
        return sum(_size(c, max_list) for c in node.children)
    if node.kind == "call" and node.name == "_?_:_" and len(node.children) == 3:
        return max(_size(c, max_list) for c in node.children[1:])
    if node.kind == "comprehension" and "iter_range" in node.parts:  # map, filter
        return _size(node.parts["iter_range"], max_list)
    return max_list  # the input, or what a function returns of it


def _expr(data: bytes) -> Node:
    for number, _, value in _fields(data):
        if not isinstance(value, bytes):
            continue
        if number == _IDENT:
            return Node("ident", _string(value, 1))
        if number == _SELECT:
            return Node("select", _string(value, 2), _messages(value, 1))
        if number == _CALL:
            return Node("call", _string(value, 2), _messages(value, 1) + _messages(value, 3))
        if number == _LIST:
            return Node("list", children=_messages(value, 1))
        if number == _STRUCT:
            return Node("struct", _string(value, 1), _entries(value))
        if number == _COMPREHENSION:
            return _comprehension(value)
    return Node("const")


def _comprehension(data: bytes) -> Node:
    parts = {}
    loop_vars = []
    for number, _, value in _fields(data):
        if not isinstance(value, bytes):
            continue
        if number in _COMPREHENSION_PARTS:
            parts[_COMPREHENSION_PARTS[number]] = _expr(value)
        elif number in (1, 3, 8):  # iter_var, accu_var, iter_var2
            loop_vars.append(value.decode("utf-8", "replace"))
    return Node("comprehension", parts=parts, loop_vars=tuple(loop_vars))


def _entries(data: bytes) -> list[Node]:
    out = []
    for number, _, entry in _fields(data):
        if number == 2 and isinstance(entry, bytes):  # CreateStruct.entries
            out.extend(_messages(entry, 3) + _messages(entry, 4))  # map_key, value
    return out


def _messages(data: bytes, wanted: int) -> list[Node]:
    return [_expr(v) for n, _, v in _fields(data) if n == wanted and isinstance(v, bytes)]


def _string(data: bytes, wanted: int) -> str:
    for number, _, value in _fields(data):
        if number == wanted and isinstance(value, bytes):
            return value.decode("utf-8", "replace")
    return ""


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of a protobuf message: ints, or bytes."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise AstError("a truncated field")
            yield number, wire, data[pos : pos + length]
            pos += length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, wire, int.from_bytes(data[pos : pos + width], "little")
            pos += width
        else:
            raise AstError(f"wire type {wire} is not read")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise AstError("a truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
