"""ConfigMaps the cluster's own controllers publish into namespaces, which no manifest declares.

- ``kube-root-ca.crt`` in every namespace (Kubernetes' root CA publisher, 1.20+).
- ``istio-ca-root-cert`` in every namespace of a service mesh: istiod writes its CA
  there for the sidecars to trust. The sim has no istiod, so it reads the mesh from
  what the manifests show of it: a namespace labelled for injection
  (``istio-injection: enabled``, ``istio.io/rev``), or a pod template that already
  carries the sidecar istiod injected (its ``sidecar.istio.io/status`` annotation,
  an ``istio-proxy`` container). Without this, a sidecar pasted into the manifests
  (as gitops-istio does) would mount a CA the sim never made, and every pod of
  the app would hang in ContainerCreating: a fault the sim invented.

A namespace that declares the ConfigMap itself keeps its own.
"""

from __future__ import annotations

from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Snapshot, mapping

__all__ = ["MESH_CA", "ROOT_CA", "published_configmaps", "with_published"]

ROOT_CA = "kube-root-ca.crt"
MESH_CA = "istio-ca-root-cert"
_INJECTED = "sidecar.istio.io/status"
_SIDECAR = "istio-proxy"


def published_configmaps(desired: Snapshot) -> list[tuple[str, str]]:
    """(namespace, name) of each ConfigMap the cluster publishes and the repo does not declare."""
    meshed = _meshed(desired)
    out = []
    for ns in sorted(desired.namespaces()):
        for name in (ROOT_CA, MESH_CA) if ns in meshed else (ROOT_CA,):
            if not desired.has("ConfigMap", ns, name):
                out.append((ns, name))
    return out


def with_published(desired: Snapshot) -> Snapshot:
    """``desired`` and the ConfigMaps the cluster publishes: what a pod can mount."""
    extra = [
        Obj(Resource("ConfigMap", ns, name, "v1"), body(ns, name))
        for ns, name in published_configmaps(desired)
    ]
    if not extra:
        return desired
    return Snapshot(
        [*desired, *extra], mode=desired.mode, revision=desired.revision, schema=desired.schema
    )


def body(namespace: str, name: str, data: str = "") -> dict[str, Any]:
    key = "ca.crt" if name == ROOT_CA else "root-cert.pem"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {key: data},
    }


def _meshed(desired: Snapshot) -> set[str]:
    out = set()
    for ns in desired.of_kind("Namespace"):
        labels = ns.labels
        if labels.get("istio-injection") == "enabled" or labels.get("istio.io/rev"):
            out.add(ns.name)
    for wl in desired.workloads():
        template = mapping(mapping(wl.obj.spec.get("template")).get("metadata"))
        injected = _INJECTED in mapping(template.get("annotations"))
        if injected or any(c.body.get("name") == _SIDECAR for c in wl.containers()):
            out.add(wl.obj.namespace)
    return out
