"""Services as the control plane completes them: cluster IPs, Endpoints and EndpointSlices.

Endpoints are computed from the observed pods exactly as the endpoints
controller does: pods the selector matches, ``addresses`` for Ready ones and
``notReadyAddresses`` for the rest (pods not yet scheduled have no IP and are
left out), ports resolved per pod (a named targetPort the pod does not name
leaves the pod out of that port). A selector matching nothing yields an
Endpoints object with no subsets, which is what ``kubectl`` shows as
``<none>``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from gitmedic.detectors.snapshot import Obj, as_list, mapping, selector_matches
from gitmedic.sim import ids
from gitmedic.sim.pods import PodView
from gitmedic.sim.stamps import iso


def service_body(svc: Obj, created: float) -> dict[str, Any]:
    spec = dict(svc.spec)
    if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
        spec.setdefault("clusterIP", ids.ip("10.96", svc.namespace, svc.name))
        spec["clusterIPs"] = [spec["clusterIP"]]
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    status: dict[str, Any] = {"loadBalancer": {}}
    if spec["type"] == "LoadBalancer":
        status["loadBalancer"] = {"ingress": [{"ip": ids.ip("172.19", svc.namespace, svc.name)}]}
    return {**svc.body, "metadata": _meta(svc, created), "spec": spec, "status": status}


def ingress_status(ing: Obj) -> dict[str, Any]:
    """The address the cluster's ingress controller gives every Ingress (as a cloud load
    balancer controller does): without one, Argo CD holds the Ingress, and so the whole
    app, at Progressing forever, a fault no real cluster with a controller has."""
    return {"loadBalancer": {"ingress": [{"ip": ids.ip("172.20", ing.namespace, ing.name)}]}}


class PodIndex:
    """Pods with an IP, indexed by (namespace, label, value) for selector lookups."""

    def __init__(self, pods: Iterable[PodView]) -> None:
        self._index: dict[tuple[str, str, str], list[PodView]] = defaultdict(list)
        for p in pods:
            if p.node and p.ip:
                meta = p.body["metadata"]
                for k, v in meta["labels"].items():
                    self._index[(meta["namespace"], k, v)].append(p)

    def selected(self, svc: Obj) -> list[PodView]:
        selector = {str(k): str(v) for k, v in mapping(svc.spec.get("selector")).items()}
        if not selector:
            return []
        candidates = min(
            (self._index.get((svc.namespace, k, v), []) for k, v in selector.items()), key=len
        )
        return [p for p in candidates if selector_matches(selector, p.body["metadata"]["labels"])]


def resolve_port(port: Mapping[str, Any], pod: PodView) -> int | None:
    target = port.get("targetPort") or port.get("port")
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in as_list(pod.body["spec"].get("containers")):
        for p in as_list(mapping(c).get("ports")):
            if mapping(p).get("name") == target:
                value = mapping(p).get("containerPort")
                return value if isinstance(value, int) else None
    return None


def endpoints(svc: Obj, pods: list[PodView], created: float) -> dict[str, Any]:
    groups: dict[tuple[tuple[str, int, str], ...], dict[str, list[dict[str, Any]]]] = {}
    for pod in pods:
        ports = _pod_ports(svc, pod)
        if not ports:
            continue
        group = groups.setdefault(ports, {"addresses": [], "notReadyAddresses": []})
        group["addresses" if pod.ready else "notReadyAddresses"].append(_address(pod))
    subsets = []
    for ports, group in sorted(groups.items()):
        subset: dict[str, Any] = {k: v for k, v in group.items() if v}
        subset["ports"] = [_port_json(p) for p in ports]
        subsets.append(subset)
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": _meta(svc, created),
    }
    body["metadata"].pop("annotations", None)
    if subsets:
        body["subsets"] = subsets
    return body


def endpoint_slice(svc: Obj, pods: list[PodView], created: float) -> dict[str, Any]:
    name = f"{svc.name}-{ids.suffix(5, 'slice', svc.namespace, svc.name)}"
    ports = sorted({p for pod in pods for p in _pod_ports(svc, pod)})
    meta = {
        "name": name,
        "namespace": svc.namespace,
        "uid": ids.uid("slice", svc.namespace, svc.name),
        "creationTimestamp": iso(created),
        "resourceVersion": "1",
        "generateName": f"{svc.name}-",
        "labels": {
            "kubernetes.io/service-name": svc.name,
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
        },
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "name": svc.name,
                "uid": ids.uid("svc", svc.namespace, svc.name),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    items = [
        {
            "addresses": [pod.ip],
            "conditions": {"ready": pod.ready, "serving": pod.ready, "terminating": False},
            "nodeName": pod.node,
            "targetRef": _target_ref(pod),
        }
        for pod in pods
        if _pod_ports(svc, pod)
    ]
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta,
        "addressType": "IPv4",
        "endpoints": items,
        "ports": [_port_json(p) for p in ports],
    }


def _pod_ports(svc: Obj, pod: PodView) -> tuple[tuple[str, int, str], ...]:
    out = []
    for port in as_list(svc.spec.get("ports")):
        port = mapping(port)
        number = resolve_port(port, pod)
        if number is not None:
            out.append((str(port.get("name") or ""), number, str(port.get("protocol") or "TCP")))
    return tuple(out)


def _port_json(port: tuple[str, int, str]) -> dict[str, Any]:
    name, number, protocol = port
    out: dict[str, Any] = {"port": number, "protocol": protocol}
    if name:
        out["name"] = name
    return out


def _address(pod: PodView) -> dict[str, Any]:
    return {"ip": pod.ip, "nodeName": pod.node, "targetRef": _target_ref(pod)}


def _target_ref(pod: PodView) -> dict[str, Any]:
    meta = pod.body["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def _meta(obj: Obj, created: float) -> dict[str, Any]:
    meta = dict(obj.metadata)
    meta.update(
        uid=ids.uid("svc" if obj.kind == "Service" else obj.kind, obj.namespace, obj.name),
        creationTimestamp=iso(created),
        resourceVersion="1",
    )
    return meta
