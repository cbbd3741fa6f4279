"""An env value that addresses a Service which is not there, or on a port it does not expose.

Addresses are found by the topology heuristic (``gitmedic.detectors.topology``):
URLs, ``host:port``, and bare hosts in ``*_HOST``/``*_ADDR`` variables with their
sibling ``*_PORT``; only in-cluster hosts are judged, never external names.

Rules and severities (chosen so correct real apps stay quiet):
- ``service-missing``: the host names no Service of its namespace. When the
  namespace does run the thing the host names (a workload, a container, or a
  pod template label value equal to the host) the address is wrong or the
  Service was deleted: **critical**, and the params name the Services that do
  front that thing (the likely fix). When nothing of that name is deployed, the
  address points at a component this manifest set does not ship (an optional
  or separately installed part, such as online-boutique's shopping assistant):
  **info**, worth knowing but not a fault of these manifests.
- ``port-mismatch``: the Service exists but the port is none of its ports
  (**critical**). A headless Service resolves to pod IPs, so there the ports
  its pods declare count too; ExternalName Services are not judged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from gitmedic.detectors.builtin._services import services_by_workload
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope
from gitmedic.detectors.topology import Call, calls

SPEC = DetectorSpec(
    id="env-service-address",
    description=(
        "An environment variable addresses an in-cluster Service (host:port or URL) "
        "that does not exist, or on a port the Service does not expose."
    ),
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the address to the Service and port the caller used before "
        "(or restore the deleted Service)."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "critical only when the namespace runs the component the host names (the Service, not "
        "the component, is missing) or the Service lacks the port; a component the app does not"
        " ship is info"
    ),
    playbooks=("env-wrong-port", "missing-service"),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for call in calls(snapshot):
        if call.service is None:
            yield _missing(snapshot, call)
        elif call.address.port is not None and not _port_ok(snapshot, call.service, call):
            yield _port_mismatch(snapshot, call, call.service)


def _missing(snapshot: Snapshot, call: Call) -> Finding:
    fronting = _services_fronting(snapshot, call.namespace, call.service_name)
    deployed = bool(fronting) or _runs(snapshot, call.namespace, call.service_name)
    evidence = f"{call.env}={_shown(call)}: no Service {call.service_name} in {call.namespace}"
    if fronting:
        evidence += f"; {call.service_name} runs behind {', '.join(s.name for s in fronting)}"
    elif not deployed:
        evidence += f"; nothing named {call.service_name} is deployed here (optional component?)"
    return SPEC.finding(
        call.caller.ref,
        f"{call.container.name}: {call.env} addresses Service {call.service_name}, "
        f"which does not exist",
        rule="service-missing",
        severity=Severity.CRITICAL if deployed else Severity.INFO,
        evidence=evidence,
        related=[s.ref for s in fronting],
        params={**_params(call), "candidates": [_candidate(s, call) for s in fronting]},
    )


def _port_mismatch(snapshot: Snapshot, call: Call, svc: Obj) -> Finding:
    ports = _service_ports(svc)
    return SPEC.finding(
        call.caller.ref,
        f"{call.container.name}: {call.env} addresses {svc.name}:{call.address.port}, "
        f"a port Service {svc.name} does not expose",
        rule="port-mismatch",
        evidence=(
            f"{call.port_env or call.env}={call.address.port}; Service {svc.name} ports {ports}"
        ),
        related=[svc.ref],
        params={**_params(call), "service_ports": ports},
    )


def _params(call: Call) -> dict[str, object]:
    return {
        "container": call.container.name,
        "container_field": call.container.list_field,
        "env": call.env,
        "env_index": call.env_index,
        "port_env": call.port_env,
        # The variable that holds the port: the sibling *_PORT, else the address itself.
        "port_var": call.port_env or call.env,
        "host": call.address.host,
        "port": call.address.port,
        "service": call.service_name,
        "namespace": call.namespace,
    }


def _shown(call: Call) -> str:
    port = f":{call.address.port}" if call.address.port is not None else ""
    return f"{call.address.host}{port}"


def _port_ok(snapshot: Snapshot, svc: Obj, call: Call) -> bool:
    spec = svc.spec
    if spec.get("type") == "ExternalName":
        return True
    if call.address.port in _service_ports(svc):
        return True
    if spec.get("clusterIP") == "None":  # headless: clients reach the pods directly
        selector = mapping(spec.get("selector"))
        pods = snapshot.workloads_selected_by(svc.namespace, selector) if selector else []
        return any(c.serves(call.address.port or 0) for w in pods for c in w.containers())
    return False


def _service_ports(svc: Obj) -> list[int]:
    return sorted(
        {
            p["port"]
            for p in map(mapping, as_list(svc.spec.get("ports")))
            if isinstance(p.get("port"), int)
        }
    )


def _candidate(svc: Obj, call: Call) -> dict[str, object]:
    return {
        "service": svc.name,
        "ports": _service_ports(svc),
        "has_port": call.address.port in _service_ports(svc),
    }


def _runs(snapshot: Snapshot, namespace: str, name: str) -> bool:
    return bool(_names_index(snapshot).get((namespace, name)))


def _services_fronting(snapshot: Snapshot, namespace: str, name: str) -> list[Obj]:
    """Services selecting a workload that runs under ``name`` (workload, container or label)."""
    fronts = services_by_workload(snapshot)
    found = {
        s.ref: s
        for w in _names_index(snapshot).get((namespace, name), [])
        for s in fronts.get(w, [])
    }
    return [found[r] for r in sorted(found)]


def _names_index(snapshot: Snapshot) -> dict[tuple[str, str], list[Resource]]:
    def build() -> dict[tuple[str, str], list[Resource]]:
        index: dict[tuple[str, str], list[Resource]] = defaultdict(list)
        for wl in snapshot.workloads():
            names = {
                wl.ref.name,
                *(c.name for c in wl.containers()),
                *map(str, wl.template_labels.values()),
            }
            for n in names:
                index[(wl.obj.namespace, n)].append(wl.ref)
        return index

    return snapshot.derived("env-service-address.names", build)
