"""Findings: what a detector reports, in the one JSON shape used everywhere.

A finding names a resource, a rule of its detector, a severity, and a human
summary plus evidence. Its fingerprint is stable across runs (it hashes the
detector, rule, resource and params, never the prose), so persistence, incidents
and PR markers can key on it.

Sensitive values (anything that could be a credential) are carried twice, k8sgpt
style: ``params`` and the prose only ever hold the masked form, and the unmasked
form lives in ``unmasked``, which is never serialised, rendered or logged.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.Enum):
    """Closed and ordered: ``critical`` is the worst."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def is_worse(self, other: Severity) -> bool:
        return self.rank > other.rank


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}


@dataclass(frozen=True, order=True)
class Resource:
    """A reference to a Kubernetes object; orders by (kind, namespace, name)."""

    kind: str
    namespace: str
    name: str
    api_version: str = field(default="v1", compare=False)

    def to_json(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Resource:
        return cls(
            kind=str(data["kind"]),
            namespace=str(data.get("namespace") or ""),
            name=str(data["name"]),
            api_version=str(data.get("apiVersion", "v1")),
        )

    def __str__(self) -> str:
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{self.name}"
        return f"{self.kind}/{self.name}"


MASK = "****"


def mask(value: str) -> str:
    """The rendered form of a sensitive value: its length class, never its content."""
    return MASK if value else ""


@dataclass(frozen=True)
class Finding:
    detector: str
    rule: str
    severity: Severity
    resource: Resource
    summary: str
    evidence: str = ""
    related: tuple[Resource, ...] = ()
    playbooks: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    # Unmasked sensitive values, by param name. Never serialised nor rendered.
    unmasked: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def fingerprint(self) -> str:
        key = json.dumps(
            [self.detector, self.rule, self.resource.to_json(), _jsonable(self.params)],
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    @property
    def sort_key(self) -> tuple[str, str, str, str, str]:
        r = self.resource
        return (self.detector, r.kind, r.namespace, r.name, self.rule)

    def to_json(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "rule": self.rule,
            "severity": self.severity.value,
            "resource": self.resource.to_json(),
            "related": [r.to_json() for r in self.related],
            "summary": self.summary,
            "evidence": self.evidence,
            "playbooks": list(self.playbooks),
            "params": _jsonable(self.params),
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        return cls(
            detector=str(data["detector"]),
            rule=str(data["rule"]),
            severity=Severity(data["severity"]),
            resource=Resource.from_json(data["resource"]),
            summary=str(data.get("summary", "")),
            evidence=str(data.get("evidence", "")),
            related=tuple(Resource.from_json(r) for r in data.get("related", ())),
            playbooks=tuple(data.get("playbooks", ())),
            params=dict(data.get("params", {})),
        )


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """The one defined order: (detector, kind, namespace, name, rule)."""
    return sorted(findings, key=lambda f: f.sort_key)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Resource):
        return value.to_json()
    return value
