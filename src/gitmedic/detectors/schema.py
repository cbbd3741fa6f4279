"""Schema verdicts for the schema-validation detector, computed outside the SDK.

The Kubernetes OpenAPI schemas are package data read from disk, and detectors do
no I/O; so the snapshot is given a :class:`SchemaCheck` by whoever builds it (the
manifest loader passes one over kubernetes-validate's bundled schemas) and the
detector only asks it for a verdict per object, as it would read any other index.
A snapshot built without one has no verdicts, and the detector reports nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class SchemaProblem:
    path: str  # dotted field path, list indexes as numbers: spec.template.spec.containers.0
    message: str


@dataclass(frozen=True)
class SchemaVerdict:
    known: bool  # False: no schema for this apiVersion and kind (a custom resource)
    version: str  # the Kubernetes minor version validated against, "1.30"
    problems: tuple[SchemaProblem, ...] = ()


class SchemaCheck(Protocol):
    def check(self, body: Mapping[str, Any]) -> SchemaVerdict: ...
