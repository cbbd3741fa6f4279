"""Success and failure conditions: a Python predicate, or a tiny expression.

Argo Rollouts writes conditions as expressions over ``result``
(``result[0] < 0.05``). Ours are the same idea in Python syntax, parsed once at
configuration time and evaluated by walking a whitelisted AST: comparisons,
``and``/``or``/``not``, arithmetic, constants, lists, subscripts of ``result``
(``result["firing"]``) and the calls ``len``, ``min``, ``max``, ``sum``, ``abs``,
``any``, ``all``. No attribute access, no other names, nothing is ``eval``-ed,
so a condition in a repo's config file cannot run code.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

Predicate = Callable[[Any], bool]
Condition = Predicate | str

_FUNCS: dict[str, Callable[..., Any]] = {
    "len": len,
    "min": min,
    "max": max,
    "sum": sum,
    "abs": abs,
    "any": any,
    "all": all,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ARITH: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
}
_CONSTANTS = {"True": True, "False": False, "None": None}


class ConditionError(ValueError):
    """A condition expression uses something outside the whitelist."""


def compile_condition(condition: Condition) -> Predicate:
    """A predicate from a callable (kept as is) or an expression over ``result``."""
    if callable(condition):
        return condition
    try:
        tree = ast.parse(condition, mode="eval")
    except SyntaxError as err:
        raise ConditionError(f"condition {condition!r} is not an expression: {err.msg}") from None
    _check(tree.body, condition)
    return lambda result: bool(_eval(tree.body, result))


def _check(node: ast.AST, source: str) -> None:
    allowed = (
        ast.Compare,
        ast.BoolOp,
        ast.UnaryOp,
        ast.BinOp,
        ast.Constant,
        ast.Name,
        ast.Subscript,
        ast.Call,
        ast.List,
        ast.Tuple,
        ast.Load,
        ast.And,
        ast.Or,
        ast.Not,
        ast.USub,
        ast.cmpop,
        ast.operator,
    )
    for child in ast.walk(node):
        if not isinstance(child, allowed):
            raise ConditionError(f"{type(child).__name__} is not allowed in {source!r}")
        if isinstance(child, ast.BinOp) and type(child.op) not in _ARITH:
            raise ConditionError(f"operator {type(child.op).__name__} is not allowed in {source!r}")
        if isinstance(child, ast.cmpop) and type(child) not in _COMPARE:
            raise ConditionError(f"{type(child).__name__} is not allowed in {source!r}")
        if isinstance(child, ast.Name) and child.id not in (*_FUNCS, *_CONSTANTS, "result"):
            raise ConditionError(f"unknown name {child.id!r} in {source!r}")
        if isinstance(child, ast.Call) and not (
            isinstance(child.func, ast.Name) and child.func.id in _FUNCS and not child.keywords
        ):
            raise ConditionError(f"only {sorted(_FUNCS)} may be called in {source!r}")


def _eval(node: ast.AST, result: Any) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return result if node.id == "result" else _CONSTANTS.get(node.id, _FUNCS.get(node.id))
    if isinstance(node, ast.Compare):
        return _compare(node, result)
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, result) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, result)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BinOp):
        return _ARITH[type(node.op)](_eval(node.left, result), _eval(node.right, result))
    if isinstance(node, ast.Subscript):
        return _eval(node.value, result)[_eval(node.slice, result)]
    if isinstance(node, ast.Call):
        return _eval(node.func, result)(*(_eval(a, result) for a in node.args))
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, result) for e in node.elts]
    raise ConditionError(f"cannot evaluate {type(node).__name__}")


def _compare(node: ast.Compare, result: Any) -> bool:
    left = _eval(node.left, result)
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = _eval(right_node, result)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True
