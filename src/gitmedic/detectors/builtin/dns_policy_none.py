"""``dnsPolicy: None`` without an in-cluster resolver: Service names stop resolving.

With ``dnsPolicy: None`` the pod's ``/etc/resolv.conf`` holds only what
``dnsConfig`` lists. The rules:

- ``dns-config-missing``: no ``dnsConfig.nameservers`` at all (the API rejects
  it, so the rollout stalls; where it slips through the pod has no resolver).
- ``nameservers-external``: every nameserver is a public (globally routable)
  address such as 8.8.8.8. Cluster DNS (kube-dns/CoreDNS Service IPs,
  NodeLocal DNSCache on 169.254.20.10) always lives on private, shared or
  link-local ranges, so a list holding at least one such address, or the
  ClusterIP of a Service in the snapshot, is taken as reaching cluster DNS.

Severity is critical when the workload's environment addresses in-cluster
Services (see :mod:`gitmedic.detectors.topology`): those calls must fail. It is
a warning otherwise, since a pod that only talks to the internet may choose
public resolvers on purpose.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from gitmedic.detectors.builtin._fields import pod_spec_path
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope
from gitmedic.detectors.topology import calls

SPEC = DetectorSpec(
    id="dns-policy-none",
    description=(
        "A pod uses dnsPolicy None with no nameserver that can answer for cluster "
        "Service names, so in-cluster DNS fails."
    ),
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod", "Service"}
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore dnsPolicy to its last good value (ClusterFirst, the default) and drop the "
        "dnsConfig nameservers, or list the cluster DNS Service IP as a nameserver."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "the pod's resolv.conf holds only what its spec lists; critical only when the pod also "
        "addresses in-cluster Services, which then cannot resolve"
    ),
    playbooks=("dns-policy-none",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    callers = snapshot.derived("dns-policy-none.callers", lambda: _in_cluster_callers(snapshot))
    for wl in snapshot.workloads():
        if wl.pod_spec.get("dnsPolicy") != "None":
            continue
        finding = _judge(snapshot, wl, calls_services=wl.ref in callers)
        if finding is not None:
            yield finding


def is_cluster_reachable(nameserver: str, cluster_ips: frozenset[str]) -> bool:
    """Could this resolver be (or forward to) cluster DNS? Public addresses cannot."""
    if nameserver in cluster_ips:
        return True
    try:
        return not ipaddress.ip_address(nameserver).is_global
    except ValueError:
        return False


def _judge(snapshot: Snapshot, wl: Workload, *, calls_services: bool) -> Finding | None:
    base = pod_spec_path(wl.obj.kind)
    nameservers = [
        str(n) for n in as_list(mapping(wl.pod_spec.get("dnsConfig")).get("nameservers"))
    ]
    cluster_ips = snapshot.derived("dns-policy-none.cluster-ips", lambda: _cluster_ips(snapshot))
    if any(is_cluster_reachable(n, cluster_ips) for n in nameservers):
        return None
    rule = "nameservers-external" if nameservers else "dns-config-missing"
    evidence = (
        f"dnsPolicy=None, dnsConfig.nameservers={nameservers} (all public)"
        if nameservers
        else "dnsPolicy=None and no dnsConfig.nameservers"
    )
    if calls_services:
        evidence += "; its environment addresses in-cluster Services"
    return SPEC.finding(
        wl.ref,
        f"{wl.obj.kind} {wl.ref.name}: dnsPolicy None leaves no resolver for cluster names",
        rule=rule,
        severity=Severity.CRITICAL if calls_services or not nameservers else Severity.WARNING,
        evidence=evidence,
        params={
            "path": f"{base}.dnsPolicy",
            "value": "None",
            "nameservers": nameservers,
            "dns_config_path": f"{base}.dnsConfig",
            "suggested": "ClusterFirst",
        },
    )


def _in_cluster_callers(snapshot: Snapshot) -> frozenset[Resource]:
    return frozenset(c.caller.ref for c in calls(snapshot))


def _cluster_ips(snapshot: Snapshot) -> frozenset[str]:
    return frozenset(
        str(svc.spec["clusterIP"])
        for svc in snapshot.of_kind("Service")
        if svc.spec.get("clusterIP") not in (None, "", "None")
    )
