"""Static check of a learned detector's source: SDK and a stdlib allowlist, nothing else.

A learned detector may have been written by an LLM, so before it ever runs it
must be plain, pure Python: imports only from the detector SDK and a small
allowlist of pure standard-library modules, no builtins that reach outside
(``open``, ``eval``, ``exec``, ``__import__``...), and no dunder attribute access
(the classic escape through ``().__class__.__subclasses__()``).
"""

from __future__ import annotations

import ast

ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "re",
        "math",
        "itertools",
        "functools",
        "collections",
        "collections.abc",
        "dataclasses",
        "typing",
        "enum",
        "ipaddress",
        "fnmatch",
        "string",
        "operator",
    }
)
SDK_PREFIX = "gitmedic.detectors"
FORBIDDEN_NAMES = frozenset(
    {
        "open",
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "memoryview",
        "help",
    }
)


def check_source(source: str, filename: str) -> list[str]:
    """Every reason ``source`` may not run as a learned detector (empty: it may)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return [f"{filename}:{exc.lineno}: syntax error: {exc.msg}"]
    problems = [f"{filename}:{line}: {msg}" for line, msg in _walk(tree)]
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assigned = {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    if "detect" not in defined:
        problems.append(f"{filename}: defines no detect(snapshot) function")
    if "SPEC" not in assigned:
        problems.append(f"{filename}: defines no SPEC = DetectorSpec(...)")
    return problems


def _walk(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            out += [(line, f"imports {a.name}") for a in node.names if not _allowed(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.level or not _allowed(module):
                out.append((line, f"imports {module}"))
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            out.append((line, f"uses {node.id}()"))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            out.append((line, f"reaches the dunder attribute {node.attr}"))
        elif isinstance(node, ast.Global | ast.Nonlocal):
            out.append((line, "uses global state"))
    return out


def _allowed(module: str) -> bool:
    return module in ALLOWED_MODULES or module == SDK_PREFIX or module.startswith(SDK_PREFIX + ".")
