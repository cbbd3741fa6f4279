"""The Services a Flagger ``Canary`` makes, which no manifest of the repository declares.

Flagger takes over the Deployment a Canary targets and serves it through three
Services it creates: ``<target>`` (what callers address), ``<target>-primary``
and ``<target>-canary``, each on ``spec.service.port`` (``targetPort`` defaulting
to it). The sim has no Flagger, so without these a caller of ``<target>`` would
find no Service: a fault the sim invented (gitops-istio's frontend calls
``backend:9898``, a Service only its Canary makes). The sim's Services select the
target's own pods: it models no primary copy and no traffic shifting, only that
the names resolve to the workload the Canary serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Snapshot, mapping

__all__ = ["canary_services", "with_canary_services"]

_GROUP = "flagger.app"


def canary_services(desired: Snapshot) -> list[Obj]:
    """The Services Flagger would create for the Canaries of ``desired`` (the ones the
    repository already declares are its own and kept)."""
    out = []
    for canary in desired.of_kind("Canary"):
        if not str(canary.body.get("apiVersion", "")).startswith(f"{_GROUP}/"):
            continue
        target = mapping(canary.spec.get("targetRef"))
        workload = desired.get(
            str(target.get("kind") or ""), canary.namespace, str(target.get("name") or "")
        )
        service = mapping(canary.spec.get("service"))
        port = service.get("port")
        if workload is None or not isinstance(port, int):
            continue
        selector = mapping(mapping(workload.spec.get("selector")).get("matchLabels"))
        for name in (workload.name, f"{workload.name}-primary", f"{workload.name}-canary"):
            if not desired.has("Service", canary.namespace, name):
                out.append(_service(canary, name, selector, port, service))
    return out


def with_canary_services(desired: Snapshot) -> Snapshot:
    extra = canary_services(desired)
    if not extra:
        return desired
    return Snapshot(
        [*desired, *extra], mode=desired.mode, revision=desired.revision, schema=desired.schema
    )


def _service(
    canary: Obj, name: str, selector: Mapping[str, Any], port: int, service: Mapping[str, Any]
) -> Obj:
    target_port = service.get("targetPort") or port
    port_name = str(service.get("portName") or "http")
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": canary.namespace,
            "ownerReferences": [
                {"apiVersion": canary.body.get("apiVersion"), "kind": "Canary", "name": canary.name}
            ],
        },
        "spec": {
            "selector": dict(selector),
            "ports": [{"name": port_name, "port": port, "targetPort": target_port}],
        },
    }
    return Obj(Resource("Service", canary.namespace, name, "v1"), body)
