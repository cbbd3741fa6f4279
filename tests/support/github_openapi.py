"""Requests and replies checked against GitHub's OpenAPI description of api.github.com.

The description (``@octokit/openapi``, :mod:`.npm_packages`) is OpenAPI 3.0: its
schemas are JSON Schema draft 4 plus ``nullable``. Loading turns each
``nullable: true`` into an explicit ``null`` type (so a null where GitHub documents
none is an error, and one it documents is not) and every ``$ref`` into an absolute
one into the same document, registered once with :mod:`referencing`; the converted
document is cached beside the package, so a process converts it at most once.

:meth:`Description.check_request` finds the operation of a method and path (``{ref}``
style parameters may hold slashes, as a branch does), rejects unknown query
parameters and validates the JSON body against ``requestBody``;
:meth:`Description.check_reply` validates a reply against the schema documented for
its status. Error replies GitHub does not document per operation (a 401, a rate
limit's 403) are checked against ``basic-error``. Each returns the problems as
sentences, empty when there is none.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft4Validator
from referencing import Registry
from referencing.jsonschema import DRAFT4

from tests.support.npm_packages import OPENAPI, NpmPackage, package_file, write_atomically

BASE = "urn:github-rest"
_DROPPED = frozenset({"example", "examples", "description", "summary", "x-github"})
_JSON = "application/json"
_SLASHED = frozenset({"{ref}", "{path}", "{base}", "{head}", "{basehead}"})  # may hold '/'
# maps keyed by names, not keywords: a property called "description" is kept
_NAMED = frozenset(
    {
        "properties",
        "patternProperties",
        "schemas",
        "responses",
        "headers",
        "content",
        "parameters",
        "requestBodies",
    }
)


def converted(node: Any, base: str = BASE) -> Any:
    """An OpenAPI 3.0 schema (or document) as plain JSON Schema draft 4."""
    if isinstance(node, list):
        return [converted(item, base) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        return {"$ref": base + node["$ref"]}
    out = {
        key: _names(value, base) if key in _NAMED else converted(value, base)
        for key, value in node.items()
        if key not in _DROPPED
    }
    if out.pop("nullable", False) is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _names(value: Any, base: str) -> Any:
    if isinstance(value, dict):
        return {name: converted(item, base) for name, item in value.items()}
    return converted(value, base)


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    spec: Mapping[str, Any]
    path_params: Mapping[str, Any]  # the path item's own parameters


class Description:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.registry: Registry[Any] = Registry().with_resource(
            BASE, DRAFT4.create_resource(document)
        )
        self._routes = [_route(template) for template in document["paths"]]

    # ------------------------------------------------------------------ lookups

    def operation(self, method: str, path: str) -> Operation | None:
        matches = [
            (score, template)
            for pattern, template, score in self._routes
            if pattern.fullmatch(path) and method.lower() in self.document["paths"][template]
        ]
        if not matches:
            return None
        template = max(matches)[1]
        item = self.document["paths"][template]
        return Operation(method.upper(), template, item[method.lower()], item)

    def resolve(self, node: Any) -> Any:
        """``node`` itself, or what its (absolute) ``$ref`` points at."""
        while isinstance(node, dict) and "$ref" in node:
            pointer = node["$ref"].removeprefix(BASE + "#/")
            node = functools.reduce(
                lambda at, key: at[key.replace("~1", "/").replace("~0", "~")],
                pointer.split("/"),
                self.document,
            )
        return node

    # ------------------------------------------------------------------ checks

    def check_request(
        self, method: str, path: str, query: Mapping[str, str], body: Any
    ) -> list[str]:
        op = self.operation(method, path)
        if op is None:
            return [f"{method} {path}: no such operation in GitHub's description"]
        where = f"{method} {path} ({op.spec.get('operationId')})"
        known = {
            self.resolve(p)["name"]
            for p in (*op.path_params.get("parameters", ()), *op.spec.get("parameters", ()))
            if self.resolve(p)["in"] == "query"
        }
        problems = [
            f"{where}: unknown query parameter {name!r}" for name in query if name not in known
        ]
        schema = _json_schema(self.resolve(op.spec.get("requestBody")))
        if body is not None:
            if schema is None:
                problems.append(f"{where}: sends a body GitHub does not document")
            else:
                problems += self._errors(f"{where} request", schema, body)
        elif schema is not None and self.resolve(op.spec["requestBody"]).get("required"):
            problems.append(f"{where}: a body is required")
        return problems

    def check_reply(self, method: str, path: str, status: int, body: Any) -> list[str]:
        op = self.operation(method, path)
        if op is None:
            return [f"{method} {path}: no such operation in GitHub's description"]
        where = f"{method} {path} -> {status} ({op.spec.get('operationId')})"
        documented = self.resolve(op.spec["responses"].get(str(status)))
        if documented is None:
            if status < 400:
                return [f"{where}: GitHub documents no {status} reply"]
            schema: Any = {"$ref": f"{BASE}#/components/schemas/basic-error"}
        else:
            schema = _json_schema(documented)
        if schema is None:  # an error's body GitHub leaves undescribed is not checked
            if status >= 400 or body is None:
                return []
            return [f"{where}: a body GitHub does not document"]
        return self._errors(f"{where} reply", schema, body)

    def _errors(self, where: str, schema: Any, instance: Any) -> list[str]:
        validator = _validator(self, json.dumps(schema, sort_keys=True))
        return [
            f"{where}: {error.message} at /{'/'.join(map(str, error.absolute_path))}"
            for error in sorted(
                validator.iter_errors(instance), key=lambda e: list(map(str, e.path))
            )
        ][:5]


@functools.lru_cache(maxsize=2048)
def _cached_validator(description_id: int, schema: str) -> Draft4Validator:
    description = _DESCRIPTIONS[description_id]
    return Draft4Validator(json.loads(schema), registry=description.registry)


def _validator(description: Description, schema: str) -> Draft4Validator:
    _DESCRIPTIONS[id(description)] = description
    return _cached_validator(id(description), schema)


_DESCRIPTIONS: dict[int, Description] = {}


def _json_schema(node: Any) -> Any:
    if not isinstance(node, dict):
        return None
    return (node.get("content") or {}).get(_JSON, {}).get("schema")


def _route(template: str) -> tuple[re.Pattern[str], str, tuple[int, int]]:
    """A pattern for ``template``; the score prefers literal text, then fewer params."""
    parts = re.split(r"(\{[^}]+\})", template)
    pattern = "".join(
        "(.+)"
        if part.startswith("{") and part in _SLASHED
        else "([^/]+)"
        if part.startswith("{")
        else re.escape(part)
        for part in parts
    )
    literal = sum(len(part) for part in parts if not part.startswith("{"))
    return re.compile(pattern), template, (literal, -template.count("{"))


@functools.cache
def rest_description() -> Description:
    """GitHub's api.github.com description, converted (cached on disk beside it)."""
    return Description(_converted_document(OPENAPI, "generated/api.github.com.json"))


def _converted_document(package: NpmPackage, name: str) -> dict[str, Any]:
    cache = package.folder / (name + ".draft4.json")
    if not cache.is_file():
        source = json.loads(package_file(package, name).read_text())
        document = {
            "paths": converted(source["paths"]),
            "components": converted(source["components"]),
        }
        write_atomically(cache, json.dumps(document))
    loaded: dict[str, Any] = json.loads(cache.read_text())
    return loaded
