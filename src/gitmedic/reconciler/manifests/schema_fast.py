"""A fast "is it valid?" for the Kubernetes schemas: compiled checks, jsonschema only on doubt.

jsonschema's validator interprets the schema on every call: for each field it
looks the keyword up, builds a child validator and resolves ``$ref`` through the
registry (urljoin, JSON pointers). On a 10,000-object namespace that cost 8 s,
four times the YAML parse. Nearly every object is valid, so this module compiles
each schema once into plain closures that answer one question, "valid?", with
the same semantics for the keywords the bundled schemas use (``type``,
``properties``, ``additionalProperties``, ``required``, ``items``, ``enum`` of
strings, ``oneOf``, ``$ref``; annotations such as ``description``, ``format`` and
``x-kubernetes-*`` assert nothing, as in jsonschema without a format checker).

The answer is one-sided by construction: ``True`` only when every keyword was
checked and passed. A keyword it does not know, a value of an unusual Python
type, anything it is unsure of answers ``False``. So a fast "valid" is never wrong.

An object that is not valid is explained by :meth:`Compiler.problems`: a walk of
the schema in jsonschema's own order and words (its messages, paths and keyword
order), which skips every subtree the compiled check passes, so it only visits
the fields at fault. Where it meets what it does not know it raises
:class:`Doubt`, and the caller asks jsonschema itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]
Path = tuple[str | int, ...]
Problem = tuple[Path, str]


class Doubt(Exception):
    """The explanation needs what only jsonschema knows (an unknown keyword, a ``oneOf``
    that more than one option passes)."""


# Keywords that annotate and assert nothing (jsonschema asserts ``format`` only when
# given a format checker, and gitmedic gives none).
_ANNOTATIONS = frozenset(
    {"description", "format", "title", "default", "example", "examples", "$schema", "$id"}
)
_KNOWN = frozenset(
    {"type", "properties", "additionalProperties", "required", "items", "enum", "oneOf", "$ref"}
)
_DEFS_PREFIXES = ("#/$defs/", "/api/_definitions.json#/$defs/")


def _never(value: Any) -> bool:
    return False


def _always(value: Any) -> bool:
    return True


# The Python types of JSON values each schema type admits for sure. An integral float
# is an "integer" to jsonschema; here it is a doubt (False), which jsonschema settles.
_PY_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "null": frozenset({type(None)}),
    "boolean": frozenset({bool}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
}


class Compiler:
    """Compiles schemas whose ``$ref`` point into one ``$defs`` map, each definition once.

    A schema becomes one closure. Leaves that only name types (most fields: strings,
    integers, booleans) are not called at all: their parent tests ``type(value)``
    against a set, inline, which is what makes a 10,000-object stream cheap.
    """

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self._refs: dict[str, Check] = {}
        self._memo: dict[int, tuple[Any, Check]] = {}  # by id: the schema kept alive with it

    def compile(self, schema: Any) -> Check:
        known = self._memo.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        check = self._compile(schema)
        self._memo[id(schema)] = (schema, check)
        return check

    def leaf(self, schema: Any) -> frozenset[type] | None:
        """The Python types a schema admits when it only names types (through a ``$ref``
        too), else None: such a field needs no call, only a set lookup."""
        seen = 0
        while isinstance(schema, Mapping) and seen < 8:
            keys = {k for k in schema if k not in _ANNOTATIONS and not k.startswith("x-")}
            if keys == {"$ref"}:
                name = _def_name(schema["$ref"])
                if name is None or name not in self.defs:
                    return None
                schema, seen = self.defs[name], seen + 1
                continue
            if keys == {"type"}:
                return _py_types(schema["type"])
            return None
        return None

    def _compile(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if not isinstance(schema, Mapping):
            return _never  # ``false``, or a shape we do not know: doubt
        keys = {k for k in schema if k not in _ANNOTATIONS and not k.startswith("x-")}
        if keys - _KNOWN:
            return _never
        if keys == {"$ref"}:
            return self._ref(schema["$ref"])
        types = _py_types(schema["type"]) if "type" in schema else None
        if "type" in schema and types is None:
            return _never
        checks = [
            c
            for c in (
                self._ref(schema["$ref"]) if "$ref" in schema else None,
                self._oneof(schema.get("oneOf")),
                _enum(schema.get("enum")),
                self._properties(schema),
                self._items(schema),
            )
            if c is not None
        ]
        return _node(types, checks)

    def _ref(self, ref: Any) -> Check:
        name = _def_name(ref)
        if name is None or name not in self.defs:
            return _never
        if name not in self._refs:
            slot: list[Check] = [_never]
            self._refs[name] = lambda v: slot[0](v)  # recursive definitions see this
            slot[0] = self.compile(self.defs[name])
            self._refs[name] = slot[0]
        return self._refs[name]

    def _oneof(self, options: Any) -> Check | None:
        """``oneOf`` of plain type schemas (the bundled ones: ``string|null`` against
        ``integer|null`` or ``number|null``), where each option's answer is certain."""
        if options is None:
            return None
        if not isinstance(options, list) or not options:
            return _never
        sets: list[frozenset[type]] = []
        for option in options:
            keys = set(option) - _ANNOTATIONS if isinstance(option, Mapping) else {"?"}
            types = _py_types(option["type"]) if keys == {"type"} else None
            if types is None:
                return _never
            sets.append(types)
        floats_doubt = any(int in t and float not in t for t in sets)  # 1.0 is an integer

        def one_of(value: Any) -> bool:
            kind = type(value)
            if floats_doubt and kind is float:
                return False
            return sum(1 for t in sets if kind in t) == 1

        return one_of

    def _properties(self, schema: Mapping[str, Any]) -> Check | None:
        if not any(k in schema for k in ("properties", "additionalProperties", "required")):
            return None
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(props, Mapping) or not isinstance(required, list):
            return _never
        leaves: dict[str, frozenset[type]] = {}
        deep: dict[str, Check] = {}
        for name, sub in props.items():
            types = self.leaf(sub)
            if types is not None:
                leaves[str(name)] = types
            else:
                deep[str(name)] = self._later(deep, str(name), sub)
        extra = schema.get("additionalProperties", True)
        if extra is True:
            return _object(leaves, deep, None, None, tuple(required))
        extra_leaf = self.leaf(extra)
        extra_check = None if extra_leaf is not None else self.compile(extra)
        return _object(leaves, deep, extra_leaf, extra_check, tuple(required))

    def _later(self, checks: dict[str, Check], key: str, schema: Any) -> Check:
        """A property's check, compiled when a value first has that property and then put
        in its place: a Deployment's schema reaches most of the API (compiling all of it
        cost a whole-repo detect 0.07 s), and manifests use a sliver of it."""

        def first(value: Any) -> bool:
            check = checks[key] = self.compile(schema)
            return check(value)

        return first

    def _items(self, schema: Mapping[str, Any]) -> Check | None:
        if "items" not in schema:
            return None
        types = self.leaf(schema["items"])
        if types is not None:
            return lambda v: type(v) is not list or all(type(x) in types for x in v)
        item = self.compile(schema["items"])
        return lambda v: type(v) is not list or all(item(x) for x in v)


def _py_types(names: Any) -> frozenset[type] | None:
    listed = [names] if isinstance(names, str) else names
    if not isinstance(listed, list) or any(n not in _PY_TYPES for n in listed):
        return None
    return frozenset().union(*(_PY_TYPES[n] for n in listed))


def _def_name(ref: Any) -> str | None:
    if not isinstance(ref, str):
        return None
    for prefix in _DEFS_PREFIXES:
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return ref[len(prefix) :]
    return None


def _node(types: frozenset[type] | None, checks: list[Check]) -> Check:
    if types is None:
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(c(v) for c in checks)
    if not checks:
        return lambda v: type(v) in types
    if len(checks) == 1:
        (only,) = checks
        return lambda v: type(v) in types and only(v)
    return lambda v: type(v) in types and all(c(v) for c in checks)


def _enum(values: Any) -> Check | None:
    if values is None:
        return None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return _never  # non-string enums compare bools and numbers subtly: doubt
    allowed = frozenset(values)
    return lambda v: type(v) is str and v in allowed


def _object(
    leaves: dict[str, frozenset[type]],
    deep: dict[str, Check],
    extra_leaf: frozenset[type] | None,
    extra: Check | None,
    required: tuple[str, ...],
) -> Check:
    """properties, additionalProperties and required, which judge objects only."""

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():
            types = leaves.get(key)
            if types is not None:
                if type(item) not in types:
                    return False
                continue
            test = deep.get(key)
            if test is not None:
                if not test(item):
                    return False
            elif extra_leaf is not None:
                if type(item) not in extra_leaf:
                    return False
            elif extra is not None and not extra(item):
                return False
        return all(name in value for name in required)

    return check


# -- explaining an object that is not valid, as jsonschema words it --------------------


def _is_type(value: Any, name: str) -> bool:
    """jsonschema's draft 2020-12 type checker."""
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return not isinstance(value, bool) and isinstance(value, int | float)
    return {
        "string": isinstance(value, str),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "null": value is None,
        "boolean": isinstance(value, bool),
    }[name]


class _Explainer:
    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler

    def problems(self, schema: Any, value: Any, path: Path) -> list[Problem]:
        if schema is True or self.compiler.compile(schema)(value):
            return []
        if not isinstance(schema, Mapping):
            raise Doubt
        out: list[Problem] = []
        for key, sub in schema.items():
            if key in _ANNOTATIONS or key.startswith("x-"):
                continue
            explain = getattr(self, _KEYWORDS.get(key, "_unknown"))
            out += explain(sub, value, path, schema)
        return out

    def _unknown(self, sub: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        raise Doubt

    def _ref(self, ref: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        name = _def_name(ref)
        if name is None or name not in self.compiler.defs:
            raise Doubt
        return self.problems(self.compiler.defs[name], value, path)

    def _type(self, types: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        names = [types] if isinstance(types, str) else list(types)
        if any(_is_type(value, n) for n in names):
            return []
        return [(path, f"{value!r} is not of type {', '.join(repr(n) for n in names)}")]

    def _enum(self, values: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        if not all(isinstance(v, str) for v in values):
            raise Doubt
        if any(v == value for v in values):
            return []
        return [(path, f"{value!r} is not one of {values!r}")]

    def _required(self, required: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return []
        return [(path, f"{r!r} is a required property") for r in required if r not in value]

    def _properties(self, props: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return []
        out: list[Problem] = []
        for name, sub in props.items():
            if name in value:
                out += self.problems(sub, value[name], (*path, name))
        return out

    def _additional(self, extra: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        if not isinstance(value, dict):
            return []
        props = schema.get("properties", {})
        extras = [k for k in value if k not in props]
        if extra is False:
            if not extras:
                return []
            shown = sorted(extras, key=str)
            verb = "was" if len(shown) == 1 else "were"
            names = ", ".join(repr(e) for e in shown)
            return [(path, f"Additional properties are not allowed ({names} {verb} unexpected)")]
        if not isinstance(extra, Mapping):
            return []  # ``true``: anything goes
        out: list[Problem] = []
        for name in extras:
            out += self.problems(extra, value[name], (*path, name))
        return out

    def _items(self, item: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        if not isinstance(value, list):
            return []
        out: list[Problem] = []
        for index, each in enumerate(value):
            out += self.problems(item, each, (*path, index))
        return out

    def _one_of(self, options: Any, value: Any, path: Path, schema: Any) -> list[Problem]:
        valid = [o for o in options if not self.problems(o, value, path)]
        if len(valid) == 1:
            return []
        if valid:
            raise Doubt  # "valid under each of ...": jsonschema's words
        return [(path, f"{value!r} is not valid under any of the given schemas")]


_KEYWORDS = {
    "$ref": "_ref",
    "type": "_type",
    "enum": "_enum",
    "required": "_required",
    "properties": "_properties",
    "additionalProperties": "_additional",
    "items": "_items",
    "oneOf": "_one_of",
}


def problems(compiler: Compiler, schema: Any, value: Any) -> list[Problem]:
    """What jsonschema reports for ``value`` (in its order before sorting), or Doubt."""
    return _Explainer(compiler).problems(schema, value, ())
