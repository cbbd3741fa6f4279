"""Benchmark: which CEL library evaluates gitmedic's learned rules (correctness, speed, size).

Candidates from PyPI, each installed into its own folder (two of them install a
top-level ``cel`` package, so they cannot share one environment)::

    for lib in cel-python cel-expr-python common-expression-language cel-bind; do
        pip install -q --target .bench-cache/cel/$lib $lib
    done
    .venv/bin/python bench/cel_libraries.py            # the table, Markdown
    .venv/bin/python bench/cel_libraries.py --libs .bench-cache/cel

Each library runs in its own subprocess (``--one LIB``) with only its folder on
``sys.path``. What is measured:

- **correctness**: CASES, examples of the CEL language definition (cel-spec
  ``doc/langdef.md`` and the conformance suite's simple tests: macros, strings,
  null and missing fields, int/uint/double, errors and their absorption by
  ``||``/``&&``, escapes that must not compile or must fail);
- **speed**: one rule (the demo's lesson shape: any container that sets
  ``command`` and an image tag) over a 1,000-object snapshot of plain JSON
  dicts, one evaluation per object, the object handed over each time (as the
  monitor does), median of RUNS;
- **size**: the installed folder, dependencies included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LIBS = ("cel-python", "cel-expr-python", "common-expression-language", "cel-bind")
RUNS = 5
ERROR = "<error>"  # the expected outcome of a case whose evaluation must fail

# (expression, variables, expected): expected ERROR means "fails to compile or evaluate".
CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("has(o.a)", {"o": {"a": 1}}, True),
    ("has(o.b)", {"o": {"a": 1}}, False),
    ("o.b", {"o": {"a": 1}}, ERROR),
    ("o.n == null", {"o": {"n": None}}, True),
    ("[1, 2, 3].all(x, x > 0)", {}, True),
    ("[1, 2, 3].exists(x, x == 2)", {}, True),
    ("[1, 2, 3].exists_one(x, x > 2)", {}, True),
    ("[1, 2, 3].map(x, x * 2)", {}, [2, 4, 6]),
    ("[1, 2, 3].filter(x, x > 1)", {}, [2, 3]),
    ("{'a': 1, 'b': 2}.all(k, k.size() == 1)", {}, True),
    ("'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b')", {}, True),
    ("'abc'.matches('^a.c$')", {}, True),
    ("size('héllo')", {}, 5),
    ("'a' in {'a': 1} && 2 in [1, 2]", {}, True),
    ("1u + 2u == 3u", {}, True),
    ("1 + 1u", {}, ERROR),
    ("7 / 2", {}, 3),
    ("-7 / 2", {}, -3),
    ("7 % -3", {}, 1),
    ("3.0 / 2.0", {}, 1.5),
    ("1 / 0", {}, ERROR),
    ("9223372036854775807 + 1", {}, ERROR),
    ("0u - 1u", {}, ERROR),
    ("true || 1 / 0 == 0", {}, True),
    ("1 / 0 == 0 || true", {}, True),
    ("false && 1 / 0 == 0", {}, False),
    ("int('12') + 1", {}, 13),
    ("string(12)", {}, "12"),
    ("type(1) == int", {}, True),
    ("[1, 2] + [3]", {}, [1, 2, 3]),
    ("o.l.size()", {"o": {"l": [1, 2]}}, 2),
    ("dyn(1) == 1.0", {}, True),
    ("o.__class__", {"o": {"a": 1}}, ERROR),
    ("o.a.__class__", {"o": {"a": 1}}, ERROR),
    ("open('/etc/passwd')", {}, ERROR),
    ("__import__('os')", {}, ERROR),
]

RULE = (
    "object.spec.template.spec.containers.exists(c, has(c.command) && c.image.endsWith(':2.1.0'))"
)


def snapshot(n: int = 1000) -> list[dict[str, Any]]:
    """``n`` Deployments as plain JSON, one in ten with the rule's fault."""
    out = []
    for i in range(n):
        container: dict[str, Any] = {
            "name": "server",
            "image": f"registry.example/app-{i}:{'2.1.0' if i % 10 == 0 else '2.0.1'}",
            "env": [{"name": f"VAR_{j}", "value": str(j)} for j in range(5)],
            "ports": [{"containerPort": 8080}],
        }
        if i % 5 == 0:
            container["command"] = ["/app"]
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": f"app-{i}",
                    "namespace": "shop",
                    "labels": {"app": f"app-{i}"},
                },
                "spec": {"replicas": 2, "template": {"spec": {"containers": [container]}}},
            }
        )
    return out


# -- one adapter per library: compile(expression, variable names) -> evaluate(variables) ----

Compiled = Callable[[dict[str, Any]], Any]


def _cel_python() -> Callable[[str, list[str]], Compiled]:
    import celpy  # type: ignore[import-not-found]

    env = celpy.Environment()

    def compile_(expr: str, names: list[str]) -> Compiled:
        program = env.program(env.compile(expr))

        def run(variables: dict[str, Any]) -> Any:
            result = program.evaluate({k: celpy.json_to_cel(v) for k, v in variables.items()})
            if isinstance(result, Exception):
                raise result
            return json.loads(json.dumps(result, cls=celpy.CELJSONEncoder))

        return run

    return compile_


def _cel_expr_python() -> Callable[[str, list[str]], Compiled]:
    from cel_expr_python import cel  # type: ignore[import-not-found]

    def compile_(expr: str, names: list[str]) -> Compiled:
        env = cel.NewEnv(variables={n: cel.Type.DYN for n in names})
        compiled = env.compile(expr)

        def run(variables: dict[str, Any]) -> Any:
            value = compiled.eval(data=variables)
            if value.type() == cel.Type.ERROR:
                raise ValueError(str(value.value()))
            return value.plain_value()

        return run

    return compile_


def _common_expression_language() -> Callable[[str, list[str]], Compiled]:
    import cel  # type: ignore[import-not-found]

    def compile_(expr: str, names: list[str]) -> Compiled:
        program = cel.compile(expr)
        return lambda variables: program.execute(variables)

    return compile_


def _cel_bind() -> Callable[[str, list[str]], Compiled]:
    import cel  # type: ignore[import-not-found]

    # cel-bind declares variables with scalar or message types only (no map, no dyn):
    # a Kubernetes object cannot be declared without a schema per kind.
    def compile_(expr: str, names: list[str]) -> Compiled:
        pool = cel.DescriptorPool()
        if names:
            raise TypeError("no dynamic (map) variable type to declare " + ", ".join(names))
        checked = cel.Compiler(pool, {}, None).compile_to_checked_expr(expr)
        interpreter = cel.Interpreter(pool, {}, None)
        plan = interpreter.build_expression_plan(checked)
        return lambda variables: interpreter.evaluate(plan, variables)

    return compile_


ADAPTERS = {
    "cel-python": _cel_python,
    "cel-expr-python": _cel_expr_python,
    "common-expression-language": _common_expression_language,
    "cel-bind": _cel_bind,
}


def measure_one(lib: str) -> dict[str, Any]:
    start = time.perf_counter()
    compile_ = ADAPTERS[lib]()
    import_s = time.perf_counter() - start
    failed = [
        expr
        for expr, variables, expected in CASES
        if not _case_ok(compile_, expr, variables, expected)
    ]
    passed = len(CASES) - len(failed)
    speed: float | None = None
    try:
        rule = compile_(RULE, ["object"])
        objects = snapshot()
        fired = sum(1 for o in objects if rule({"object": o}) is True)
        assert fired == 100, fired  # every tenth is 2.1.0 and sets command (every fifth does)
        times = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            for o in objects:
                rule({"object": o})
            times.append(time.perf_counter() - t0)
        speed = statistics.median(times) / len(objects)
    except Exception as exc:  # a library that cannot run the rule at all
        failed.append(f"(the rule: {type(exc).__name__}: {str(exc)[:80]})")
    return {
        "lib": lib,
        "passed": passed,
        "failed": failed,
        "eval_us": None if speed is None else speed * 1e6,
        "import_ms": import_s * 1e3,
    }


def _case_ok(
    compile_: Callable[[str, list[str]], Compiled],
    expr: str,
    variables: dict[str, Any],
    expected: Any,
) -> bool:
    try:
        got = compile_(expr, sorted(variables))(variables)
    except Exception:
        return expected == ERROR
    if expected == ERROR:
        return False
    return bool(type(got) is type(expected) and got == expected) or (
        isinstance(got, list) and [*got] == expected
    )


def _size_mb(folder: Path) -> float:
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--libs", default=".bench-cache/cel", help="folder of per-library installs")
    parser.add_argument("--one", choices=LIBS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return
    rows = []
    for lib in LIBS:
        folder = Path(args.libs) / lib
        env = {**os.environ, "PYTHONPATH": str(folder.resolve())}
        proc = subprocess.run(
            [sys.executable, "-S", __file__, "--one", lib], capture_output=True, text=True, env=env
        )
        if proc.returncode != 0:
            rows.append({"lib": lib, "error": proc.stderr.strip().splitlines()[-1:]})
            continue
        row = json.loads(proc.stdout)
        row["size_mb"] = _size_mb(folder)
        rows.append(row)
    _print(rows)


def _print(rows: list[dict[str, Any]]) -> None:
    print(
        f"| library | CEL cases passed (of {len(CASES)}) | µs per evaluation "
        "(1,000 objects) | import ms | installed MB |"
    )
    print("|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['lib']} | did not run: {r['error']} | | | |")
            continue
        us = "cannot run the rule" if r["eval_us"] is None else f"{r['eval_us']:.1f}"
        print(f"| {r['lib']} | {r['passed']} | {us} | {r['import_ms']:.0f} | {r['size_mb']:.1f} |")
    for r in rows:
        for expr in r.get("failed", []):
            print(f"- {r['lib']} fails: `{expr}`")


if __name__ == "__main__":
    main()
