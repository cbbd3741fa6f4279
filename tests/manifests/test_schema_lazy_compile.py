"""A schema's property checks are compiled when a value first has the property, and
answer on that first call exactly as if compiled up front."""

from __future__ import annotations

from typing import Any

from gitmedic.reconciler.manifests.schema_fast import Compiler

DEFS: dict[str, Any] = {
    "Top": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "spec": {"$ref": "#/$defs/Spec"}},
        "required": ["name"],
    },
    "Spec": {
        "type": "object",
        "properties": {"pod": {"$ref": "#/$defs/Pod"}},
        "additionalProperties": False,
    },
    "Pod": {"type": "object", "properties": {"image": {"type": "string"}}},
}
TOP = {"$ref": "#/$defs/Top"}


def test_a_property_no_value_has_is_never_compiled() -> None:
    compiler = Compiler(DEFS)
    check = compiler.compile(TOP)
    assert check({"name": "web"})
    assert "Spec" not in compiler._refs  # nothing had a spec: its schema was never compiled


def test_the_first_value_with_a_property_is_judged_as_an_eager_compile_would() -> None:
    invalid = {"name": "web", "spec": {"pod": {"image": 7}}}
    valid = {"name": "web", "spec": {"pod": {"image": "nginx"}}}
    assert Compiler(DEFS).compile(TOP)(invalid) is False
    assert Compiler(DEFS).compile(TOP)(valid) is True
    unknown = {"name": "web", "spec": {"replicas": 3}}  # additionalProperties: false
    assert Compiler(DEFS).compile(TOP)(unknown) is False


def test_once_compiled_the_property_keeps_its_check() -> None:
    compiler = Compiler(DEFS)
    check = compiler.compile(TOP)
    assert check({"name": "a", "spec": {"pod": {"image": "x"}}})
    compiled = dict(compiler._refs)
    assert {"Spec", "Pod"} <= set(compiled)
    assert not check({"name": "b", "spec": {"pod": {"image": False}}})
    assert check({"name": "c", "spec": {"pod": {"image": "y"}}})
    assert compiler._refs == compiled  # nothing compiled twice
