"""Reading container resources (requests, limits) and the LimitRange defaults around them.

The API server fills in what a container omits before quota and HPA see it:
a missing request defaults to the container's own limit, and a LimitRange of
type Container supplies ``defaultRequest`` (itself defaulting to ``default``)
and ``default`` limits. :func:`effective_request` / :func:`effective_limit`
follow those rules, so detectors judge what the cluster will judge.
"""

from __future__ import annotations

from decimal import Decimal

from gitmedic.detectors.quantity import try_quantity
from gitmedic.detectors.snapshot import JSON, Container, Snapshot, as_list, mapping


def resources(container: Container, section: str) -> JSON:
    """``requests`` or ``limits`` of a container."""
    return mapping(mapping(container.body.get("resources")).get(section))


def quantity(container: Container, section: str, name: str) -> Decimal | None:
    return try_quantity(resources(container, section).get(name))


def defaults(snapshot: Snapshot, namespace: str) -> tuple[frozenset[str], frozenset[str]]:
    """Resource names a LimitRange of the namespace defaults: (requests, limits)."""
    requests, limits = default_values(snapshot, namespace)
    return frozenset(requests), frozenset(limits)


def default_values(snapshot: Snapshot, namespace: str) -> tuple[JSON, JSON]:
    """The values LimitRanges of the namespace default: (requests, limits), first range wins."""
    return snapshot.derived(
        f"resources.defaults.{namespace}", lambda: _defaults(snapshot, namespace)
    )


def effective_request(snapshot: Snapshot, namespace: str, container: Container, name: str) -> bool:
    if name in resources(container, "requests") or name in resources(container, "limits"):
        return True
    return name in defaults(snapshot, namespace)[0]


def effective_limit(snapshot: Snapshot, namespace: str, container: Container, name: str) -> bool:
    return name in resources(container, "limits") or name in defaults(snapshot, namespace)[1]


def _defaults(snapshot: Snapshot, namespace: str) -> tuple[JSON, JSON]:
    requests: dict[str, object] = {}
    limits: dict[str, object] = {}
    for lr in snapshot.of_kind("LimitRange", namespace):
        for item in as_list(lr.spec.get("limits")):
            item = mapping(item)
            if item.get("type", "Container") != "Container":
                continue
            default = mapping(item.get("default"))
            for name, value in default.items():
                limits.setdefault(name, value)
            for name, value in {**default, **mapping(item.get("defaultRequest"))}.items():
                requests.setdefault(name, value)
    return requests, limits
