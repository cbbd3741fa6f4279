"""Validating objects against the Kubernetes OpenAPI schemas bundled with kubernetes-validate.

``kubernetes_validate.validate`` re-reads and re-links the schema files on every
call (about 50 ms an object); here each (version, apiVersion, kind) schema is
compiled once per process and its validator kept, so detect, the gate and a
bisect over many revisions pay for a kind once. Even compiled, jsonschema
interprets the schema per field (8 s for 10,000 objects), so an object is first
asked "valid?" of closures compiled from the same schema
(:mod:`~gitmedic.reconciler.manifests.schema_fast`), and only one they doubt is
validated by jsonschema, whose errors are the ones reported. Validation is strict, as the
API server's field validation is: an unknown field is a problem. The schema set
is the newest one not newer than the Kubernetes version asked for, the same
choice kubernetes-validate makes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.schema import SchemaProblem, SchemaVerdict
from gitmedic.reconciler.manifests.schema_fast import Check, Compiler, Doubt, problems
from gitmedic.reconciler.manifests.schema_files import (
    all_versions,
    definitions,
    kind_schema,
    major_minor,
    schema_root,
)

__all__ = ["KubernetesSchemas", "SchemaVersionError", "chart_kube_version", "schemas_installed"]

MAX_PROBLEMS = 5  # per object: the first few say what is wrong; the rest is noise


class SchemaVersionError(ValueError):
    """A Kubernetes version the bundled schemas do not cover."""


def schemas_installed() -> bool:
    """Whether the bundled schemas are here: kubernetes-validate is the ``[kube]`` extra
    (108 MB of schemas), so a core install (the detect action's) validates nothing."""
    return schema_root() is not None


def chart_kube_version(version: str | None) -> str | None:
    """The version a chart renders for: the schema set's, else the one asked (None: helm's)."""
    return resolve_version(version) if schemas_installed() else version


class KubernetesSchemas:
    """A :class:`~gitmedic.detectors.schema.SchemaCheck` for one Kubernetes version."""

    def __init__(self, version: str | None = None) -> None:
        self.asked = version  # resolved on first use: reading the schemas costs start-up time
        self._resolved = ""
        self._kinds: dict[tuple[str, str], tuple[Check, Any] | None] = {}

    @property
    def version(self) -> str:
        if not self._resolved:
            self._resolved = resolve_version(self.asked)
        return self._resolved

    def check(self, body: Mapping[str, Any]) -> SchemaVerdict:
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if type(api_version) is not str or type(kind) is not str:
            api_version, kind = str(api_version), str(kind)
        key = (api_version, kind)
        if key not in self._kinds:  # per instance: one lookup per object, not three hashes
            self._kinds[key] = _compiled(self.version, api_version, kind)
        compiled = self._kinds[key]
        if compiled is None:
            return SchemaVerdict(False, self.version)
        valid, schema = compiled
        if type(body) is dict and valid(body):
            return SchemaVerdict(True, self.version)
        problems = _problems(self.version, api_version, kind, schema, body)
        return SchemaVerdict(True, self.version, problems)


def _problems(
    version: str, api_version: str, kind: str, schema: Any, body: Mapping[str, Any]
) -> tuple[SchemaProblem, ...]:
    """The first problems by path, in jsonschema's words: explained from the compiled
    schema, else (a doubt) by jsonschema itself."""
    try:
        found = problems(_compiler(version), schema, dict(body))
    except Doubt:
        validator = _validator(version, api_version, kind)
        found = [(tuple(e.path), e.message) for e in validator.iter_errors(dict(body))]
    found.sort(key=lambda p: list(map(str, p[0])))
    return tuple(
        SchemaProblem(".".join(map(str, path)), message) for path, message in found[:MAX_PROBLEMS]
    )


@functools.cache
def resolve_version(version: str | None) -> str:
    """The bundled schema set for ``version`` ("1.30", "v1.30.2"; None: the newest)."""
    known = all_versions()
    if version is None:
        return major_minor(known[-1])
    span = f"the bundled schemas cover {major_minor(known[0])} to {major_minor(known[-1])}"
    wanted = _minor_key(version, span)
    fitting = [v for v in known if _minor_key(v, span) <= wanted]
    if not fitting or wanted > _minor_key(known[-1], span):
        raise SchemaVersionError(f"Kubernetes version {version!r}: {span}")
    return major_minor(fitting[-1])


def _minor_key(version: str, span: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise SchemaVersionError(f"Kubernetes version {version!r} is not MAJOR.MINOR; {span}")
    return int(match[1]), int(match[2])


@functools.cache
def _compiled(version: str, api_version: str, kind: str) -> tuple[Check, Any] | None:
    """The fast check and the schema of one kind; None: the bundle has no schema for it."""
    schema = kind_schema(version, api_version, kind)
    if schema is None:
        return None
    return _compiler(version).compile(schema), schema


@functools.cache
def _compiler(version: str) -> Compiler:
    """One per schema set: a definition is compiled once for every kind that uses it."""
    return Compiler(definitions(version).get("$defs", {}))


@functools.cache
def _validator(version: str, api_version: str, kind: str) -> Any:
    """jsonschema's validator of one kind, built only when an object needs its words."""
    import jsonschema
    from referencing import Registry, Resource

    schema = kind_schema(version, api_version, kind)
    registry = Resource.from_contents(definitions(version)) @ (
        Resource.from_contents(schema) @ Registry()
    )
    return jsonschema.Draft202012Validator(schema, registry=registry)
