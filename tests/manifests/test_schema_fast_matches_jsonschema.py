"""The compiled schema check answers as jsonschema does, and explains in jsonschema's words.

A fast "valid" must never be wrong (an invalid object passing is a missed
critical), and an explanation must be jsonschema's own (path, message, order).
Checked on every object of the real apps in tests/fixtures/data and on seeded
mutations of each: a field of the wrong type, an unknown field, a required one
removed, a null, an integral float, a list where an object belongs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest

from gitmedic.reconciler.manifests import schema
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.schema_fast import Compiler, Doubt, problems
from tests.conftest import real_apps

pytestmark = pytest.mark.skipif(not schema.schemas_installed(), reason="needs gitmedic[kube]")

KEPT = (("apiVersion",), ("kind",))  # the schema is chosen by these
WRONG: tuple[Any, ...] = ("three", 7, True, None, 3.0, 2.5, [], {}, ["x"], {"x": 1})


def real_objects() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for app in real_apps():
        out += [dict(o.body) for o in load_desired(app.path, namespace=app.namespace).snapshot]
    return out


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from leaves(child, (*path, index))


def mutated(body: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(body)
    path = rng.choice([p for p in leaves(out) if p and p not in KEPT])
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    action = rng.randrange(3)
    if action == 0 or isinstance(parent, list):
        parent[last] = rng.choice(WRONG)
    elif action == 1:
        parent[f"unexpected{rng.randrange(3)}"] = "x"
    else:
        del parent[last]
    return out


def jsonschema_answer(body: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    version = schema.resolve_version(None)
    validator = schema._validator(version, body["apiVersion"], body["kind"])
    return [(tuple(e.path), e.message) for e in validator.iter_errors(body)]


def by_path(found: list[tuple[tuple[Any, ...], str]]) -> list[tuple[tuple[Any, ...], str]]:
    return sorted(found, key=lambda p: list(map(str, p[0])))


def cases() -> list[dict[str, Any]]:
    rng = random.Random(22)
    version = schema.resolve_version(None)
    objects = [o for o in real_objects() if schema._compiled(version, o["apiVersion"], o["kind"])]
    return objects + [mutated(o, rng) for o in objects for _ in range(3)]


def test_fast_valid_is_never_wrong_and_explanations_are_jsonschemas() -> None:
    version = schema.resolve_version(None)
    compiler = schema._compiler(version)
    checked = explained = 0
    for body in cases():
        fast, kind_schema = schema._compiled(version, body["apiVersion"], body["kind"]) or (
            None,
            None,
        )
        assert fast is not None
        expected = jsonschema_answer(body)
        if fast(body):
            assert expected == [], (body, expected)
            checked += 1
            continue
        try:
            found = problems(compiler, kind_schema, body)
        except Doubt:
            continue
        assert by_path(found) == by_path(expected), body
        explained += 1
    assert checked > 300 and explained > 300, (checked, explained)


def test_a_doubt_is_never_a_pass() -> None:
    """What the compiler does not know answers False (jsonschema then decides)."""
    compiler = Compiler({})
    assert not compiler.compile({"pattern": "^a"})("a")
    assert not compiler.compile({"$ref": "#/$defs/missing"})({})
    assert not compiler.compile({"type": "integer"})(3.0)  # jsonschema's integer: a doubt
    assert not compiler.compile({"enum": [1, 2]})(1)
    assert compiler.compile({"type": "string", "x-kubernetes-list-type": "atomic"})("a")
    with pytest.raises(Doubt):
        problems(compiler, {"pattern": "^a"}, "b")
