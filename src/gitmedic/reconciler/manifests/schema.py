"""Validating objects against the Kubernetes OpenAPI schemas bundled with kubernetes-validate.

``kubernetes_validate.validate`` re-reads and re-links the schema files on every
call (about 50 ms an object); here each (version, apiVersion, kind) schema is
compiled once per process and its validator kept, so detect, the gate and a
bisect over many revisions pay for a kind once. Validation is strict, as the
API server's field validation is: an unknown field is a problem. The schema set
is the newest one not newer than the Kubernetes version asked for, the same
choice kubernetes-validate makes.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.schema import SchemaProblem, SchemaVerdict

__all__ = ["KubernetesSchemas", "SchemaVersionError", "chart_kube_version", "schemas_installed"]

MAX_PROBLEMS = 5  # per object: the first few say what is wrong; the rest is noise


class SchemaVersionError(ValueError):
    """A Kubernetes version the bundled schemas do not cover."""


def schemas_installed() -> bool:
    """Whether the bundled schemas are here: kubernetes-validate is the ``[kube]`` extra
    (108 MB of schemas), so a core install (the detect action's) validates nothing."""
    return importlib.util.find_spec("kubernetes_validate") is not None


def chart_kube_version(version: str | None) -> str | None:
    """The version a chart renders for: the schema set's, else the one asked (None: helm's)."""
    return resolve_version(version) if schemas_installed() else version


class KubernetesSchemas:
    """A :class:`~gitmedic.detectors.schema.SchemaCheck` for one Kubernetes version."""

    def __init__(self, version: str | None = None) -> None:
        self.asked = version  # resolved on first use: importing the schemas costs start-up time

    @property
    def version(self) -> str:
        return resolve_version(self.asked)

    def check(self, body: Mapping[str, Any]) -> SchemaVerdict:
        validator = _validator(self.version, str(body.get("apiVersion")), str(body.get("kind")))
        if validator is None:
            return SchemaVerdict(False, self.version)
        errors = sorted(validator.iter_errors(dict(body)), key=lambda e: list(map(str, e.path)))
        problems = tuple(
            SchemaProblem(".".join(str(p) for p in e.path), e.message)
            for e in errors[:MAX_PROBLEMS]
        )
        return SchemaVerdict(True, self.version, problems)


@functools.cache
def resolve_version(version: str | None) -> str:
    """The bundled schema set for ``version`` ("1.30", "v1.30.2"; None: the newest)."""
    from kubernetes_validate.utils import all_versions, major_minor

    known = all_versions()
    if version is None:
        return str(major_minor(known[-1]))
    span = f"the bundled schemas cover {major_minor(known[0])} to {major_minor(known[-1])}"
    wanted = _minor_key(version, span)
    fitting = [v for v in known if _minor_key(v, span) <= wanted]
    if not fitting or wanted > _minor_key(known[-1], span):
        raise SchemaVersionError(f"Kubernetes version {version!r}: {span}")
    return str(major_minor(fitting[-1]))


def _minor_key(version: str, span: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise SchemaVersionError(f"Kubernetes version {version!r} is not MAJOR.MINOR; {span}")
    return int(match[1]), int(match[2])


@functools.cache
def _validator(version: str, api_version: str, kind: str) -> Any:
    import jsonschema
    from kubernetes_validate.utils import all_versions, major_minor, schema_contents
    from referencing import Registry, Resource

    full = [v for v in all_versions() if major_minor(v) == version][-1]
    folder = f"kubernetes-json-schema/v{full}-local-strict"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = schema_contents(f"{folder}/{kind.lower()}-{group}.json", full)
    except FileNotFoundError:
        return None
    definitions = schema_contents(f"{folder}/_definitions.json", full)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)
