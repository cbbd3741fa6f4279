"""A NetworkPolicy that cuts a called workload off from the workloads that call it.

A policy isolates the pods its ``podSelector`` selects for ingress when its
``policyTypes`` holds ``Ingress`` (or, without ``policyTypes``, always). Such a
pod then accepts only what some ingress rule of some selecting policy admits;
no rules at all means deny all. Callers come from the env-address dependency
graph (``topology.callers_of``); each is evaluated against the rules:
``podSelector`` / ``namespaceSelector`` peers against the caller's pod template
labels and its namespace's labels (plus the implicit
``kubernetes.io/metadata.name``), ``ports`` against the port the call reaches on
the pod (the Service's targetPort, resolved through container port names).

Where a rule cannot be judged from manifests (an ``ipBlock`` peer, a namespace
whose labels the snapshot does not hold, a port that cannot be resolved) it is
taken to admit: the detector reports only isolation it can prove. Egress
policies on the caller's side are not judged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.builtin._labels import label_selector_matches
from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, Workload, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope
from gitmedic.detectors.topology import Call, callers_of

SPEC = DetectorSpec(
    id="network-policy-isolation",
    description="A NetworkPolicy denies ingress to a workload from the workloads that call it.",
    kinds=frozenset(
        {"NetworkPolicy", "Namespace", "Service", "Deployment", "StatefulSet", "DaemonSet"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Add an ingress rule admitting the callers (or restore the policy's previous rules), "
        "or stop selecting the called pods."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "only isolation the policies prove is reported; a rule that cannot be judged from the "
        "manifests is taken to admit"
    ),
    playbooks=("network-policy-deny-all",),
)

_NAMESPACE_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class PodPort:
    """The port a call reaches on the pod: a number and/or a container port name."""

    number: int | None
    name: str | None


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    policies = _ingress_policies(snapshot)
    if not policies:
        return
    for svc, selector in selecting_services(snapshot):
        index = policies.get(svc.namespace)
        calls = callers_of(snapshot, svc) if index else []
        if not index or not calls:
            continue
        for wl in selected_workloads(snapshot, svc, selector):
            selecting = index.selecting(wl)
            denied = [
                c for c in calls if selecting and not _admitted(snapshot, selecting, c, svc, wl)
            ]
            if denied:
                yield _finding(selecting, wl, svc, denied)


def _finding(policies: list[Obj], wl: Workload, svc: Obj, denied: list[Call]) -> Finding:
    policy = policies[0]
    callers = sorted({c.caller.ref for c in denied})
    rules = len(as_list(policy.spec.get("ingress")))
    return SPEC.finding(
        policy.ref,
        f"NetworkPolicy {policy.name} blocks {', '.join(c.name for c in callers)} "
        f"from {wl.ref.name} (Service {svc.name})",
        evidence=(
            f"{len(policies)} polic{'y' if len(policies) == 1 else 'ies'} select "
            f"{wl.ref}; {policy.name} has {rules} ingress rule(s); none admits "
            + ", ".join(f"{c.caller.ref.name} ({c.env})" for c in denied)
        ),
        related=[wl.ref, svc.ref, *callers, *(p.ref for p in policies[1:])],
        params={
            "policy": policy.name,
            "workload": wl.ref.to_json(),
            "service": svc.name,
            "callers": [c.to_json() for c in callers],
            "ports": sorted({c.address.port for c in denied if c.address.port is not None}),
            "ingress_rules": rules,
        },
    )


@dataclass
class _PolicyIndex:
    """A namespace's ingress policies, found for a pod by one of its labels, not by scanning."""

    by_label: dict[tuple[str, str], list[Obj]]
    unkeyed: list[Obj]  # empty matchLabels: checked for every pod

    def selecting(self, wl: Workload) -> list[Obj]:
        candidates = {p.ref: p for p in self.unkeyed}
        for pair in wl.template_labels.items():
            candidates.update((p.ref, p) for p in self.by_label.get(_pair(*pair), []))
        return [candidates[r] for r in sorted(candidates) if _selects(candidates[r], wl)]


def _ingress_policies(snapshot: Snapshot) -> dict[str, _PolicyIndex]:
    index: dict[str, _PolicyIndex] = defaultdict(lambda: _PolicyIndex(defaultdict(list), []))
    for policy in snapshot.of_kind("NetworkPolicy"):
        types = as_list(policy.spec.get("policyTypes")) or ["Ingress"]
        if "Ingress" not in types:
            continue
        match = mapping(mapping(policy.spec.get("podSelector")).get("matchLabels"))
        entry = index[policy.namespace]
        if match:
            entry.by_label[_pair(*min(match.items()))].append(policy)  # any one pair will do
        else:
            entry.unkeyed.append(policy)
    return dict(index)


def _pair(key: object, value: object) -> tuple[str, str]:
    return str(key), str(value)


def _selects(policy: Obj, wl: Workload) -> bool:
    return label_selector_matches(mapping(policy.spec.get("podSelector")), wl.template_labels)


def _admitted(snapshot: Snapshot, policies: list[Obj], call: Call, svc: Obj, wl: Workload) -> bool:
    port = _pod_port(svc, wl, call.address.port)
    return any(
        _peers_admit(snapshot, mapping(rule), policy.namespace, call)
        and _ports_admit(mapping(rule), port)
        for policy in policies
        for rule in as_list(policy.spec.get("ingress"))
    )


def _peers_admit(snapshot: Snapshot, rule: JSON, namespace: str, call: Call) -> bool:
    peers = [mapping(p) for p in as_list(rule.get("from"))]
    return not peers or any(_peer_admits(snapshot, p, namespace, call) for p in peers)


def _peer_admits(snapshot: Snapshot, peer: JSON, namespace: str, call: Call) -> bool:
    if "ipBlock" in peer:
        return True  # pod IPs are unknown in manifests: cannot prove it excludes the caller
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if pods is None and namespaces is None:
        return False
    caller_ns = call.caller.obj.namespace
    if namespaces is None:
        ns_ok = caller_ns == namespace
    else:
        ns_ok = _namespace_matches(snapshot, mapping(namespaces), caller_ns)
    return ns_ok and (
        pods is None or label_selector_matches(mapping(pods), call.caller.template_labels)
    )


def _namespace_matches(snapshot: Snapshot, selector: JSON, namespace: str) -> bool:
    ns = snapshot.get("Namespace", "", namespace)
    labels = {**(ns.labels if ns is not None else {}), _NAMESPACE_LABEL: namespace}
    if label_selector_matches(selector, labels):
        return True
    # Without the Namespace object only its implicit name label is known.
    keys = set(mapping(selector.get("matchLabels"))) | {
        str(mapping(e).get("key")) for e in as_list(selector.get("matchExpressions"))
    }
    return ns is None and bool(keys - {_NAMESPACE_LABEL})


def _ports_admit(rule: JSON, port: PodPort) -> bool:
    ports = [mapping(p) for p in as_list(rule.get("ports"))]
    return not ports or any(_port_admits(p, port) for p in ports)


def _port_admits(allowed: JSON, port: PodPort) -> bool:
    if str(allowed.get("protocol", "TCP")) != "TCP":
        return False
    value = allowed.get("port")
    if value is None or (port.number is None and port.name is None):
        return True  # all ports, or a port we cannot resolve
    if isinstance(value, str) and not value.isdigit():
        return value == port.name
    if port.number is None:
        return True
    low = int(value)
    end = allowed.get("endPort")
    high = end if isinstance(end, int) else low
    return low <= port.number <= high


def _pod_port(svc: Obj, wl: Workload, address_port: int | None) -> PodPort:
    """The pod port behind ``svc:address_port`` (unknown parts are None)."""
    entry = next(
        (p for p in map(mapping, as_list(svc.spec.get("ports"))) if p.get("port") == address_port),
        None,
    )
    if address_port is None or entry is None:
        return PodPort(None, None)
    target = entry.get("targetPort") or address_port
    declared = [p for c in wl.containers(init=False) for p in c.ports]
    if isinstance(target, str) and not target.isdigit():
        number = next((p.get("containerPort") for p in declared if p.get("name") == target), None)
        return PodPort(number if isinstance(number, int) else None, target)
    number = int(target)
    name = next((p.get("name") for p in declared if p.get("containerPort") == number), None)
    return PodPort(number, str(name) if name else None)
