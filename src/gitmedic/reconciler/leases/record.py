"""A Lease's spec, as client-go's leaderelection reads and writes it.

``holderIdentity`` names the holder ('' after a clean release: anyone may take it);
``leaseDurationSeconds`` is how long others wait, from when they last *saw* the
Lease change, before they may take it; ``acquireTime`` is when this holder took it,
``renewTime`` when it last renewed it, ``leaseTransitions`` how many times it
changed hands. The times are MicroTime: RFC 3339 with microseconds, in UTC.
``version`` is the object's ``resourceVersion``: an update carries it, so of two
replicas writing the same version one is answered 409 Conflict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

API_VERSION = "coordination.k8s.io/v1"
_MICRO = "%Y-%m-%dT%H:%M:%S.%fZ"


class LeaseFormatError(ValueError):
    """A Lease object that is not what a Lease looks like (hostile or corrupt)."""


@dataclass(frozen=True)
class LeaseRecord:
    holder: str
    duration_s: int
    acquired: float  # epoch seconds
    renewed: float
    transitions: int = 0
    version: str = ""  # resourceVersion ('' for one not created yet)
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def renewed_at(self, now: float) -> LeaseRecord:
        return replace(self, renewed=now)

    def taken_by(self, holder: str, now: float, duration_s: int) -> LeaseRecord:
        """Another holder's (or nobody's) Lease, now ``holder``'s: one more transition."""
        return replace(
            self,
            holder=holder,
            duration_s=duration_s,
            acquired=now,
            renewed=now,
            transitions=self.transitions + 1,
        )

    def released_at(self, now: float) -> LeaseRecord:
        """client-go's release: no holder, a one-second duration, the transitions kept."""
        return replace(self, holder="", duration_s=1, acquired=now, renewed=now)


def micro_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime(_MICRO)


def parse_micro_time(text: object, name: str) -> float:
    if not isinstance(text, str):
        raise LeaseFormatError(f"{name}: not a time: {text!r}"[:200])
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise LeaseFormatError(f"{name}: not an RFC 3339 time: {text!r}"[:200]) from None
    if parsed.tzinfo is None:
        raise LeaseFormatError(f"{name}: a time without a zone: {text!r}"[:200])
    return parsed.timestamp()


def to_object(name: str, namespace: str, record: LeaseRecord) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": dict(record.labels),
        "annotations": dict(record.annotations),
    }
    if record.version:
        metadata["resourceVersion"] = record.version
    return {
        "apiVersion": API_VERSION,
        "kind": "Lease",
        "metadata": metadata,
        "spec": {
            "holderIdentity": record.holder,
            "leaseDurationSeconds": record.duration_s,
            "acquireTime": micro_time(record.acquired),
            "renewTime": micro_time(record.renewed),
            "leaseTransitions": record.transitions,
        },
    }


def from_object(obj: object) -> tuple[str, LeaseRecord]:
    """The Lease's name and record; a malformed one raises :class:`LeaseFormatError`."""
    if not isinstance(obj, Mapping):
        raise LeaseFormatError("a Lease that is not an object")
    metadata, spec = obj.get("metadata"), obj.get("spec") or {}
    if not isinstance(metadata, Mapping) or not isinstance(spec, Mapping):
        raise LeaseFormatError("a Lease without metadata or spec")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise LeaseFormatError("a Lease without a name")
    duration, transitions = spec.get("leaseDurationSeconds", 0), spec.get("leaseTransitions", 0)
    if not _count(duration) or not _count(transitions):
        raise LeaseFormatError(f"Lease {name}: a duration or transitions that is not a count")
    holder = spec.get("holderIdentity") or ""
    if not isinstance(holder, str):
        raise LeaseFormatError(f"Lease {name}: a holderIdentity that is not a string")
    unset = "1970-01-01T00:00:00Z"  # never acquired or renewed: as old as can be
    record = LeaseRecord(
        holder=holder,
        duration_s=int(duration),
        acquired=parse_micro_time(spec.get("acquireTime") or unset, f"Lease {name} acquireTime"),
        renewed=parse_micro_time(spec.get("renewTime") or unset, f"Lease {name} renewTime"),
        transitions=int(transitions),
        version=str(metadata.get("resourceVersion") or ""),
        labels=_strings(metadata.get("labels")),
        annotations=_strings(metadata.get("annotations")),
    )
    return name, record


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}
