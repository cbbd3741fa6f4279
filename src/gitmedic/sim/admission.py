"""Pod admission: ServiceAccount existence and ResourceQuota, as the API server checks them.

A pod the API server rejects is never created: its ReplicaSet records
``FailedCreate`` with the server's message, which is where people (and the
detectors) find a quota problem. Usage is tallied in creation order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.sim.quantity import fmt_mem, mem_bytes, millicores

_RESOURCES = {
    "requests.cpu": ("requests", "cpu"),
    "cpu": ("requests", "cpu"),
    "limits.cpu": ("limits", "cpu"),
    "requests.memory": ("requests", "memory"),
    "memory": ("requests", "memory"),
    "limits.memory": ("limits", "memory"),
}


class Admission:
    def __init__(self, desired: Snapshot) -> None:
        self.desired = desired
        self.used: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def admit(self, namespace: str, pod_name: str, spec: Mapping[str, Any]) -> str:
        """ "" when admitted (usage is then counted), else the API server's error."""
        sa = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        if sa != "default" and not self.desired.has("ServiceAccount", namespace, sa):
            return (
                f'pods "{pod_name}" is forbidden: error looking up service account '
                f'{namespace}/{sa}: serviceaccount "{sa}" not found'
            )
        for quota in self.desired.of_kind("ResourceQuota", namespace):
            problem = self._check(quota.name, mapping(quota.spec.get("hard")), namespace, spec)
            if problem:
                return f'pods "{pod_name}" is forbidden: {problem}'
        for quota in self.desired.of_kind("ResourceQuota", namespace):
            for resource, amount in pod_usage(spec).items():
                self.used[(namespace, quota.name)][resource] += amount
        return ""

    def usage(self, namespace: str, quota: str) -> dict[str, int]:
        return dict(self.used[(namespace, quota)])

    def _check(
        self, name: str, hard: Mapping[str, Any], namespace: str, spec: Mapping[str, Any]
    ) -> str:
        containers = [mapping(c) for c in as_list(spec.get("containers"))]
        for resource, (section, field) in _RESOURCES.items():
            if resource not in hard:
                continue
            missing = [
                str(c.get("name"))
                for c in containers
                if field not in mapping(mapping(c.get("resources")).get(section))
            ]
            if missing:
                return f"failed quota: {name}: must specify {resource} for: {','.join(missing)}"
        usage = pod_usage(spec)
        used = self.used[(namespace, name)]
        for resource, limit in hard.items():
            want = usage.get(str(resource), 0)
            cap = _amount(str(resource), limit)
            if cap is not None and want and used[str(resource)] + want > cap:
                return (
                    f"exceeded quota: {name}, requested: {resource}={_show(resource, want)}, "
                    f"used: {resource}={_show(resource, used[str(resource)])}, "
                    f"limited: {resource}={limit}"
                )
        return ""


def pod_usage(spec: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    out["pods"] = 1
    for c in as_list(spec.get("containers")):
        res = mapping(mapping(c).get("resources"))
        for resource, (section, field) in _RESOURCES.items():
            amount = _amount(resource, mapping(res.get(section)).get(field))
            out[resource] += amount or 0
    return dict(out)


def _amount(resource: str, value: Any) -> int | None:
    if resource == "pods" or resource.startswith("count/"):
        return int(value) if str(value).isdigit() else None
    if "cpu" in resource:
        return millicores(value)
    if "memory" in resource:
        return mem_bytes(value)
    return None


def _show(resource: object, amount: int) -> str:
    if "memory" in str(resource):
        return fmt_mem(amount)
    if "cpu" in str(resource):
        return f"{amount}m"
    return str(amount)
