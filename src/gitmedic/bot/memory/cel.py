"""CEL expressions of learned rules: compiled once, evaluated with a cost limit.

The runtime is ``cel-expr-python``, the Python binding of the CEL reference
implementation (chosen by measurement: bench/cel_libraries.py, bench/RESULTS.md).
A CEL expression can only read the variables it is given and call CEL's standard
functions: no attribute of a Python object, no file, no import, no loop that is
not a comprehension over a finite list. What it can still do is cost, so every
expression has a bound, enforced before it ever runs, since the binding exposes no
step counter of its own:

- **structural**: at most ``MAX_SOURCE`` characters, ``MAX_TOKENS`` tokens, and
  comprehension macros (``all``, ``exists``, ``exists_one``, ``map``, ``filter``)
  nested at most ``MAX_NESTING`` deep; the static cost ``tokens x MAX_LIST ** nesting``
  must stay under ``COST_LIMIT``;
- **input**: a value handed to an expression has at most ``MAX_LIST`` items in any
  list or map and at most ``MAX_NODES`` nodes in all, so no comprehension runs over
  more than ``MAX_LIST`` items (:func:`check_input`).

Identifiers that start with ``__`` are refused outright: CEL has no use for them,
and they are what an escape from a host language would spell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

MAX_SOURCE = 2000
MAX_TOKENS = 400
MAX_NESTING = 2
MAX_LIST = 256
MAX_NODES = 50_000
COST_LIMIT = 20_000_000  # tokens x MAX_LIST ** nesting: 2 nested over 256 items, 305 tokens
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})

_TOKEN = re.compile(
    r"""\s+|(?P<str>[rR]?[bB]?("""
    r'''"""(?:\\.|[^\\])*?"""|\'\'\'(?:\\.|[^\\])*?\'\'\'|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')'''
    r""")|(?P<num>\d[\w.]*)|(?P<ident>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])"""
)


class CelError(ValueError):
    """An expression that does not compile, is over its bound, or fails to evaluate."""


@dataclass(frozen=True)
class Cost:
    tokens: int
    nesting: int
    identifiers: frozenset[str] = frozenset()

    @property
    def static(self) -> int:
        return int(self.tokens * MAX_LIST**self.nesting)


def measure(source: str) -> Cost:
    """Tokens and comprehension nesting of ``source`` (CelError on what CEL cannot lex)."""
    tokens, stack, nesting, pos = 0, [False], 0, 0
    previous, identifiers = "", set()
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            raise CelError(f"unexpected character {source[pos]!r} at offset {pos}")
        pos = m.end()
        text = m.group(0)
        if text.isspace():
            continue
        tokens += 1
        if m.group("ident"):
            if text.startswith("__"):
                raise CelError(f"identifier {text!r} is reserved")
            identifiers.add(text)
        if text in "([{":
            macro = text == "(" and previous in MACROS
            stack.append(macro)
            nesting = max(nesting, sum(stack))
        elif text in ")]}":
            if len(stack) == 1:
                raise CelError(f"unbalanced {text!r} at offset {m.start()}")
            stack.pop()
        previous = text
    return Cost(tokens, nesting, frozenset(identifiers))


def check_bound(source: str) -> Cost:
    if len(source) > MAX_SOURCE:
        raise CelError(f"the expression is {len(source)} characters long (limit {MAX_SOURCE})")
    cost = measure(source)
    if cost.tokens > MAX_TOKENS:
        raise CelError(f"the expression has {cost.tokens} tokens (limit {MAX_TOKENS})")
    if cost.nesting > MAX_NESTING:
        raise CelError(
            f"comprehensions nest {cost.nesting} deep (limit {MAX_NESTING}): over the cost limit"
        )
    if cost.static > COST_LIMIT:
        raise CelError(
            f"its cost bound {cost.tokens} tokens x {MAX_LIST}^{cost.nesting} items is over "
            f"the limit of {COST_LIMIT:,}"
        )
    return cost


class Program:
    """One compiled expression over the named variables (each of any JSON type)."""

    def __init__(self, source: str, variables: Sequence[str]) -> None:
        self.source = source
        self.cost = check_bound(source)
        # The variables it reads: only those are converted for CEL (an object's body is
        # the bulk of an evaluation's cost), the others are bound to null.
        self.uses = self.cost.identifiers & frozenset(variables)
        self._unused = {name: None for name in variables if name not in self.uses}
        # Without the engine (a core install) it is the [rules] extra that is missing,
        # which the CLI says; never a refusal of the rule.
        env = _env(tuple(sorted(variables)))
        try:
            self._compiled = env.compile(source)
        except Exception as exc:  # the binding raises plain RuntimeError/ValueError
            raise CelError(_first_line(exc)) from None

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """The value (plain JSON types); CelError when the expression fails on this input."""
        from cel_expr_python import cel

        try:
            data = {k: v for k, v in variables.items() if k in self.uses}
            value = self._compiled.eval(data=self._unused | data)
        except Exception as exc:
            raise CelError(_first_line(exc)) from None
        if value.type() == cel.Type.ERROR:
            raise CelError(_first_line(value.value()))
        return value.plain_value()


@cache
def _env(variables: tuple[str, ...]) -> Any:
    from cel_expr_python import cel

    return cel.NewEnv(variables={name: cel.Type.DYN for name in variables})


def _first_line(what: object) -> str:
    text = str(what).strip()
    return text.splitlines()[0][:300] if text else type(what).__name__


def check_input(value: Any) -> None:
    """CelError when ``value`` is over the input bound (too many items or nodes)."""
    nodes = 0
    todo = [value]
    while todo:
        node = todo.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise CelError(f"the input has more than {MAX_NODES:,} values (limit)")
        if isinstance(node, Mapping | list | tuple):
            if len(node) > MAX_LIST:
                raise CelError(
                    f"the input has a list or map of {len(node)} items (limit {MAX_LIST})"
                )
            todo.extend(node.values() if isinstance(node, Mapping) else node)
