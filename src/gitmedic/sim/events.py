"""Event objects (core/v1), one per (object, reason, message), aggregated with a count.

The kubelet and controllers de-duplicate repeated events into one object with
``count``, ``firstTimestamp`` and ``lastTimestamp``; the sim renders them that
way, named ``<object>.<16 hex>`` as the API names them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitmedic.sim import ids
from gitmedic.sim.clock import iso
from gitmedic.sim.lifecycle import EventSpec
from gitmedic.sim.world import Involved


def event_objects(events: Iterable[tuple[Involved, EventSpec]]) -> list[dict[str, Any]]:
    merged: dict[tuple[Involved, str, str, str], EventSpec] = {}
    for who, spec in events:
        key = (who, spec.reason, spec.message, spec.field_path)
        old = merged.get(key)
        if old is None or spec.count > old.count:
            merged[key] = spec
    return [_event(who, spec) for (who, *_), spec in merged.items()]


def _event(who: Involved, spec: EventSpec) -> dict[str, Any]:
    namespace = who.namespace or "default"
    involved: dict[str, Any] = {
        "apiVersion": who.api_version,
        "kind": who.kind,
        "name": who.name,
        "uid": who.uid,
    }
    if who.namespace:
        involved["namespace"] = who.namespace
    if spec.field_path:
        involved["fieldPath"] = spec.field_path
    name = f"{who.name}.{ids.digest('event', who, spec.reason, spec.message).hex()[:16]}"
    host = {"host": who.name} if who.kind == "Node" else {}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": iso(spec.first),
            "uid": ids.uid("event", name),
            "resourceVersion": "1",
        },
        "involvedObject": involved,
        "reason": spec.reason,
        "message": spec.message,
        "source": {"component": spec.component, **host},
        "firstTimestamp": iso(spec.first),
        "lastTimestamp": iso(max(spec.last, spec.first)),
        "count": spec.count,
        "type": "Warning" if spec.warning else "Normal",
        "reportingComponent": spec.component,
        "reportingInstance": "",
    }
