"""The sim's three worker nodes, as the API shows them (labels, capacity, conditions).

Three nodes because that is the smallest cluster where spreading, anti-affinity
deadlocks ("more replicas than nodes") and a pinned hostname selector all mean
something, and the usual size of the kind/k3d clusters the benchmarks run on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitmedic.sim import ids
from gitmedic.sim.clock import iso
from gitmedic.sim.quantity import GI, MI

KUBELET_VERSION = "v1.31.0"


@dataclass(frozen=True)
class Node:
    name: str
    zone: str
    index: int
    cpu_m: int = 4000
    memory: int = 16 * GI
    max_pods: int = 110
    extra_labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        return {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "sim-standard-4",
            "topology.kubernetes.io/region": "sim-region",
            "topology.kubernetes.io/zone": self.zone,
            **self.extra_labels,
        }

    @property
    def allocatable_cpu_m(self) -> int:
        return self.cpu_m - 100  # system-reserved, as kubeadm clusters report it

    @property
    def allocatable_memory(self) -> int:
        return self.memory - 256 * MI

    @property
    def internal_ip(self) -> str:
        return f"172.18.0.{self.index + 2}"

    @property
    def pod_cidr_prefix(self) -> str:
        return f"10.244.{self.index}"


def default_nodes() -> tuple[Node, ...]:
    return tuple(Node(f"sim-worker-{i + 1}", f"sim-zone-{'abc'[i]}", i) for i in range(3))


def node_object(node: Node, created: float) -> dict[str, Any]:
    resources = {"cpu": f"{node.cpu_m // 1000}", "memory": f"{node.memory // 1024}Ki"}
    allocatable = {
        "cpu": f"{node.allocatable_cpu_m}m",
        "memory": f"{node.allocatable_memory // 1024}Ki",
    }
    common = {"ephemeral-storage": "100Gi", "pods": str(node.max_pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "uid": ids.uid("node", node.name),
            "labels": node.labels,
            "creationTimestamp": iso(created),
            "resourceVersion": "1",
        },
        "spec": {"podCIDR": f"{node.pod_cidr_prefix}.0/24", "providerID": f"sim://{node.name}"},
        "status": {
            "capacity": {**resources, **common},
            "allocatable": {**allocatable, **common},
            "addresses": [
                {"type": "InternalIP", "address": node.internal_ip},
                {"type": "Hostname", "address": node.name},
            ],
            "conditions": _conditions(created),
            "nodeInfo": _node_info(node),
        },
    }


def _conditions(created: float) -> list[dict[str, str]]:
    stamp = iso(created)
    healthy = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    return [
        {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": "kubelet is posting ready status" if kind == "Ready" else reason,
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }
        for kind, status, reason in healthy
    ]


def _node_info(node: Node) -> dict[str, str]:
    return {
        "architecture": "amd64",
        "bootID": ids.uid("boot", node.name),
        "containerRuntimeVersion": "containerd://1.7.18",
        "kernelVersion": "6.8.0-sim",
        "kubeProxyVersion": KUBELET_VERSION,
        "kubeletVersion": KUBELET_VERSION,
        "machineID": ids.digest("machine", node.name).hex(),
        "operatingSystem": "linux",
        "osImage": "Debian GNU/Linux 12 (bookworm)",
        "systemUUID": ids.uid("system", node.name),
    }
