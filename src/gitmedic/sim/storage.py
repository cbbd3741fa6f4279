"""PersistentVolumeClaims: Bound when a PersistentVolume or a StorageClass can satisfy them.

The sim cluster has one default StorageClass, ``standard`` (as kind and k3d
clusters do), which provisions any claim that names it or names no class. A
claim with ``storageClassName: ""`` binds only to a matching PersistentVolume of
the desired state; a claim naming an unknown class stays ``Pending`` with a
``ProvisioningFailed`` event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.snapshot import Obj, Snapshot, as_list, mapping
from gitmedic.sim import ids
from gitmedic.sim.quantity import mem_bytes

DEFAULT_CLASS = "standard"


def claim_problem(pvc: Mapping[str, Any], namespace: str, name: str, desired: Snapshot) -> str:
    """ "" when the claim binds, else why it stays Pending."""
    spec = mapping(pvc.get("spec"))
    cls = spec.get("storageClassName")
    if _pv_for(spec, namespace, name, desired) is not None:
        return ""
    if cls is None or cls == DEFAULT_CLASS or (cls and desired.has("StorageClass", "", str(cls))):
        return ""
    if cls == "":
        return "no persistent volumes available for this claim and no storage class is set"
    return f'storageclass.storage.k8s.io "{cls}" not found'


def claim_status(
    pvc: Mapping[str, Any], namespace: str, name: str, desired: Snapshot, problem: str
) -> dict[str, Any]:
    spec = dict(mapping(pvc.get("spec")))
    if problem:
        return {**pvc, "spec": spec, "status": {"phase": "Pending"}}
    pv = _pv_for(spec, namespace, name, desired)
    spec.setdefault("storageClassName", DEFAULT_CLASS)
    spec["volumeName"] = pv.name if pv else f"pvc-{ids.uid('pvc', namespace, name)}"
    spec.setdefault("volumeMode", "Filesystem")
    request = mapping(mapping(spec.get("resources")).get("requests")).get("storage", "1Gi")
    capacity = mapping(mapping(pv.spec).get("capacity")).get("storage", request) if pv else request
    status = {
        "phase": "Bound",
        "accessModes": list(as_list(spec.get("accessModes"))),
        "capacity": {"storage": capacity},
    }
    return {**pvc, "spec": spec, "status": status}


def _pv_for(spec: Mapping[str, Any], namespace: str, name: str, desired: Snapshot) -> Obj | None:
    want = mem_bytes(mapping(mapping(spec.get("resources")).get("requests")).get("storage")) or 0
    cls = spec.get("storageClassName")
    for pv in desired.of_kind("PersistentVolume"):
        ref = mapping(pv.spec.get("claimRef"))
        if ref and (ref.get("name") != name or ref.get("namespace", namespace) != namespace):
            continue
        if spec.get("volumeName") and spec.get("volumeName") != pv.name:
            continue
        if cls not in (None, "") and pv.spec.get("storageClassName", "") != cls:
            continue
        have = mem_bytes(mapping(pv.spec.get("capacity")).get("storage")) or 0
        modes = set(as_list(spec.get("accessModes"))) - set(as_list(pv.spec.get("accessModes")))
        if have >= want and not modes:
            return pv
    return None
