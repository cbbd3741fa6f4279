"""No sleeping driver in ``src``: the product's code steps and says when the next step is
due; waiting is its caller's (a tick, a test advancing a fake clock), never a loop inside.

A function that sleeps, on a Clock or on ``time``, is found by its call to ``sleep``
(``<anything>.sleep(...)`` or a bare ``sleep(...)``). The ones that remain are listed
below, each with why; a listed one that no longer sleeps must leave the list, so the
list only shrinks with the code. ``bot/`` is outside this guard for now (its loop's
``run`` waits between ticks on purpose), but for the comment commands and the
transaction kinds, which only record and step (issue 26).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "gitmedic"
OUTSIDE = ("gitmedic/bot/",)  # see the module docstring
# ...but the comment commands and the transaction kinds, which never wait, are guarded
GUARDED = ("gitmedic/bot/service/live_actions.py", "gitmedic/bot/transactions/")

ALLOWED = {
    ("gitmedic/reconciler/clock.py", "SystemClock.sleep"): (
        "the system Clock's own sleep: what a caller that waits calls, not a driver"
    ),
}


def sleeping_functions(root: Path = SRC) -> Iterator[tuple[str, str, int]]:
    """(module path under ``root``, qualified function, line) of each call to ``sleep``."""
    for path in sorted((root / "gitmedic").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(OUTSIDE) and not module.startswith(GUARDED):
            continue
        yield from _calls(ast.parse(path.read_text(), str(path)), module)


def _calls(tree: ast.Module, module: str) -> Iterator[tuple[str, str, int]]:
    def visit(node: ast.AST, scope: tuple[str, ...]) -> Iterator[tuple[str, str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from visit(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Call) and _is_sleep(child.func):
                yield module, ".".join(scope) or "<module>", child.lineno
            yield from visit(child, scope)

    return visit(tree, ())


def _is_sleep(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "sleep"
    return isinstance(func, ast.Name) and func.id == "sleep"


def test_no_function_in_src_sleeps_but_the_listed_ones() -> None:
    found = list(sleeping_functions())
    unlisted = [f"{m}:{line} {fn}" for m, fn, line in found if (m, fn) not in ALLOWED]
    assert not unlisted, (
        "these functions sleep: step instead, returning when the next step is due "
        "(see tests/support/stepping.py for how tests wait):\n" + "\n".join(unlisted)
    )


def test_every_listed_sleeper_still_sleeps() -> None:
    sleeping = {(m, fn) for m, fn, _ in sleeping_functions()}
    stale = sorted(f"{m} {fn}" for m, fn in ALLOWED if (m, fn) not in sleeping)
    assert not stale, "no longer sleeps: take it off ALLOWED\n" + "\n".join(stale)


def test_the_guard_sees_every_shape_of_a_sleep() -> None:
    source = (
        "import time\nfrom time import sleep\n"
        "class Poller:\n"
        "    def wait(self, clock):\n"
        "        while True:\n"
        "            clock.sleep(1)\n"
        "def drive(x):\n"
        "    def inner():\n"
        "        time.sleep(2)\n"
        "    sleep(3)\n"
        "def fine(clock):\n"
        "    return clock.now() + 1\n"
    )
    found = [(fn, line) for _, fn, line in _calls(ast.parse(source), "m.py")]
    assert found == [("Poller.wait", 6), ("drive.inner", 9), ("drive", 10)]
