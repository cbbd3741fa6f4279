"""NetworkPolicy: may traffic go from one pod (or from outside) to another pod's port?

Kubernetes semantics: a pod is isolated for ingress (egress) once any policy
selecting it lists that direction (``policyTypes``, or by default Ingress, plus
Egress when the policy has ``egress`` rules); traffic is then allowed only if
some rule of some such policy admits the peer and the port. An egress-isolated
pod must also be allowed DNS (port 53) or every in-cluster name fails to resolve.
Peers outside the cluster match only ``ipBlock`` rules and rules with no peers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.snapshot import Obj, Snapshot, as_list, mapping
from gitmedic.sim.scheduling import label_selector_matches

Peer = tuple[str, Mapping[str, str]] | None  # (namespace, pod labels); None: outside


def allows(desired: Snapshot, src: Peer, dst: tuple[str, Mapping[str, str]], port: int) -> bool:
    return _ingress_ok(desired, src, dst, port) and _egress_ok(desired, src, dst, port)


def dns_ok(desired: Snapshot, src: Peer) -> bool:
    if src is None:
        return True
    policies = _isolating(desired, src, "Egress")
    return not policies or any(
        _rule_admits(r, None, 53, desired, "to", any_peer=True)
        for p in policies
        for r in as_list(p.spec.get("egress"))
    )


def _ingress_ok(
    desired: Snapshot, src: Peer, dst: tuple[str, Mapping[str, str]], port: int
) -> bool:
    policies = _isolating(desired, dst, "Ingress")
    return not policies or any(
        _rule_admits(r, src, port, desired, "from")
        for p in policies
        for r in as_list(p.spec.get("ingress"))
    )


def _egress_ok(desired: Snapshot, src: Peer, dst: tuple[str, Mapping[str, str]], port: int) -> bool:
    if src is None:
        return True
    policies = _isolating(desired, src, "Egress")
    return not policies or any(
        _rule_admits(r, dst, port, desired, "to")
        for p in policies
        for r in as_list(p.spec.get("egress"))
    )


def _isolating(desired: Snapshot, pod: tuple[str, Mapping[str, str]], direction: str) -> list[Obj]:
    namespace, labels = pod
    return [
        p
        for p in desired.of_kind("NetworkPolicy", namespace)
        if direction in _types(p)
        and label_selector_matches(mapping(p.spec.get("podSelector")), labels)
    ]


def _types(policy: Obj) -> set[str]:
    declared = as_list(policy.spec.get("policyTypes"))
    if declared:
        return {str(t) for t in declared}
    return {"Ingress"} | ({"Egress"} if "egress" in policy.spec else set())


def _rule_admits(
    rule: Any, peer: Peer, port: int, desired: Snapshot, side: str, *, any_peer: bool = False
) -> bool:
    rule = mapping(rule)
    ports = [mapping(p) for p in as_list(rule.get("ports"))]
    if ports and not any(_port_matches(p, port) for p in ports):
        return False
    peers = [mapping(p) for p in as_list(rule.get(side))]
    return not peers or any_peer or any(_peer_matches(p, peer, desired) for p in peers)


def _port_matches(rule_port: Mapping[str, Any], port: int) -> bool:
    wanted = rule_port.get("port")
    if wanted is None or isinstance(wanted, str):
        return True  # a named port matches by name on the pod; the sim does not resolve it
    end = rule_port.get("endPort", wanted)
    return isinstance(wanted, int) and wanted <= port <= (end if isinstance(end, int) else wanted)


def _peer_matches(rule_peer: Mapping[str, Any], peer: Peer, desired: Snapshot) -> bool:
    if "ipBlock" in rule_peer:
        cidr = str(mapping(rule_peer["ipBlock"]).get("cidr", ""))
        return peer is None or cidr == "0.0.0.0/0"
    if peer is None:
        return False
    namespace, labels = peer
    if "namespaceSelector" in rule_peer:
        ns_labels = _namespace_labels(desired, namespace)
        if not label_selector_matches(mapping(rule_peer["namespaceSelector"]), ns_labels):
            return False
    if "podSelector" in rule_peer:
        return label_selector_matches(mapping(rule_peer["podSelector"]), labels)
    return "namespaceSelector" in rule_peer


def _namespace_labels(desired: Snapshot, namespace: str) -> dict[str, str]:
    obj = desired.get("Namespace", "", namespace)
    labels = {str(k): str(v) for k, v in (obj.labels if obj else {}).items()}
    return {**labels, "kubernetes.io/metadata.name": namespace}
