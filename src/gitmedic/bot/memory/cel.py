"""CEL expressions of learned rules: compiled once, evaluated with a cost limit.

The runtime is ``cel-expr-python``, the Python binding of the CEL reference
implementation (chosen by measurement: bench/cel_libraries.py, bench/RESULTS.md).
A CEL expression can only read the variables it is given and call CEL's standard
functions: no attribute of a Python object, no file, no import, no loop that is
not a comprehension over a finite list. What it can still do is cost, so every
expression has a bound, enforced before it ever runs, read from the engine's own
checked AST (:mod:`.cel_ast`), never from the text, which comments can disguise:

- **structural**: at most ``MAX_SOURCE`` characters and ``MAX_EXPR_NODES`` nodes,
  comprehensions (``all``, ``exists``, ``exists_one``, ``map``, ``filter``, as the
  engine expands them) nested at most ``MAX_NESTING`` deep, and an upper bound of
  evaluation steps (each loop body times the most items its range can hold) under
  ``COST_LIMIT``;
- **input**: a value handed to an expression has at most ``MAX_LIST`` items in any
  list or map and at most ``MAX_NODES`` nodes in all, so no comprehension over the
  input runs over more than ``MAX_LIST`` items (:func:`check_input`);
- **runtime**: whatever the estimate misses, each evaluation runs in a child
  process with a hard bound on CPU time and memory (:mod:`.cel_sandbox`).

Names that start with ``__`` are refused outright: CEL has no use for them, and
they are what an escape from a host language would spell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from gitmedic.bot.memory.cel_ast import AstError, Measured, measure_checked, parse_checked

MAX_SOURCE = 2000
MAX_EXPR_NODES = 400
MAX_NESTING = 2
MAX_LIST = 256
MAX_NODES = 50_000
COST_LIMIT = 20_000_000  # evaluation steps: a 300-node body in 2 loops over 256 items


class CelError(ValueError):
    """An expression that does not compile, is over its bound, or fails to evaluate."""


def check_length(source: str) -> None:
    if len(source) > MAX_SOURCE:
        raise CelError(f"the expression is {len(source)} characters long (limit {MAX_SOURCE})")


def check_bound(compiled: Any) -> Measured:
    """The measure of a compiled expression; CelError when it is over a bound."""
    try:
        cost = measure_checked(parse_checked(compiled.serialize()), MAX_LIST)
    except (AstError, RecursionError) as exc:
        raise CelError(f"its syntax tree cannot be measured: {exc}") from None
    reserved = sorted(n for n in cost.names if n.startswith("__"))
    if reserved:
        raise CelError(f"identifier {reserved[0]!r} is reserved")
    if cost.nodes > MAX_EXPR_NODES:
        raise CelError(f"the expression has {cost.nodes} nodes (limit {MAX_EXPR_NODES})")
    if cost.nesting > MAX_NESTING:
        raise CelError(
            f"comprehensions nest {cost.nesting} deep (limit {MAX_NESTING}): over the cost limit"
        )
    if cost.cost > COST_LIMIT:
        raise CelError(
            f"its cost bound of {cost.cost:,} steps (loops over up to {MAX_LIST} items) is "
            f"over the limit of {COST_LIMIT:,}"
        )
    return cost


class Program:
    """One compiled expression over the named variables (each of any JSON type)."""

    def __init__(self, source: str, variables: Sequence[str]) -> None:
        self.source = source
        check_length(source)
        # Without the engine (a core install) it is the [rules] extra that is missing,
        # which the CLI says; never a refusal of the rule.
        self._variables = tuple(sorted(variables))
        env = _env(self._variables)
        try:
            self._compiled = env.compile(source)
        except Exception as exc:  # the binding raises plain RuntimeError/ValueError
            raise CelError(_first_line(exc)) from None
        self.cost = check_bound(self._compiled)
        # The variables it reads: only those are converted for CEL (an object's body is
        # the bulk of an evaluation's cost), the others are bound to null.
        self.uses = self.cost.identifiers & frozenset(variables)
        self._unused = {name: None for name in variables if name not in self.uses}

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """The value (plain JSON types); CelError when the expression fails on this input
        or goes over the runtime bound (:mod:`.cel_sandbox`)."""
        from gitmedic.bot.memory.cel_sandbox import SandboxFailure, sandbox

        data = {k: v for k, v in variables.items() if k in self.uses}
        try:
            return sandbox().evaluate(self.source, self._variables, self._unused | data)
        except SandboxFailure as exc:
            raise CelError(_first_line(exc)) from None


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
