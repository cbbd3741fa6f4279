"""The API server's defaulting of a pod's resources, applied before admission.

A real Pod object never holds the template as written: before quota admission
the API server fills in what a container omits. A LimitRange of type Container
supplies ``default`` limits and ``defaultRequest`` requests (themselves
defaulting to ``default``), and a request still missing defaults to the
container's own limit. Quota, the scheduler, the HPA and the QoS class all read
the defaulted spec, so the sim applies the same rules here, once, where a pod
is created. The rules are the detectors' (``_resources``), so the sim and the
detectors agree on which container "has a CPU request".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.builtin._resources import default_values
from gitmedic.detectors.snapshot import JSON, Snapshot, as_list, mapping

_CONTAINER_LISTS = ("initContainers", "containers")


def defaulted_spec(spec: Mapping[str, Any], desired: Snapshot, namespace: str) -> dict[str, Any]:
    """``spec`` with every container's requests and limits defaulted (a new dict)."""
    requests, limits = default_values(desired, namespace)
    out = dict(spec)
    for key in _CONTAINER_LISTS:
        if key in spec:
            out[key] = [_container(mapping(c), requests, limits) for c in as_list(spec.get(key))]
    return out


def _container(container: JSON, requests: JSON, limits: JSON) -> dict[str, Any]:
    resources = mapping(container.get("resources"))
    own_limits = mapping(resources.get("limits"))
    # a missing request: the container's own limit first, then the LimitRange's request
    all_requests = {**requests, **own_limits, **mapping(resources.get("requests"))}
    all_limits = {**limits, **own_limits}
    if not all_limits and not all_requests:
        return dict(container)
    defaulted: dict[str, Any] = {**resources}
    if all_limits:
        defaulted["limits"] = all_limits
    if all_requests:
        defaulted["requests"] = all_requests
    return {**container, "resources": defaulted}
