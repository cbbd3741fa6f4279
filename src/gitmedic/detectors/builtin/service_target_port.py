"""A Service port whose targetPort no selected container declares.

A number must equal some selected container's ``containerPort``; a name must be a
container port's ``name``. Without a targetPort the Service uses ``port``. A
container that declares no ports at all tells us nothing (many images listen
without declaring), so such workloads are not judged: this is what keeps the
detector quiet on real apps that omit ``ports``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="service-target-port",
    description=(
        "A Service targetPort (number or name) is served by none of the selected containers."
    ),
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation="Set targetPort to the containerPort (or port name) the selected container serves.",
    scope=Scope.BOTH,
    certain_because=(
        "critical only when the selected containers declare ports and none is the targetPort; "
        "containers declaring none are not judged"
    ),
    playbooks=("service-target-port",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        workloads = selected_workloads(snapshot, svc, selector)
        containers = [c for w in workloads for c in w.containers(init=False)]
        declared = [c for c in containers if c.ports]
        if not declared or len(declared) < len(containers):
            continue
        ports = [mapping(p) for p in as_list(svc.spec.get("ports"))]
        targets = [_target(p) for p in ports]
        resolved = sum(1 for t in targets if t is not None and any(c.serves(t) for c in declared))
        served = sorted(
            {
                p["containerPort"]
                for c in declared
                for p in c.ports
                if isinstance(p.get("containerPort"), int)
            }
        )
        for index, (port, target) in enumerate(zip(ports, targets, strict=True)):
            if target is None or any(c.serves(target) for c in declared):
                continue
            # A named port that no container names cannot resolve: the port is dead.
            # A number the containers do not declare may still be listened on, so it
            # is only critical when no port of the Service reaches a declared one.
            severity = (
                Severity.CRITICAL if isinstance(target, str) or not resolved else Severity.INFO
            )
            yield SPEC.finding(
                svc.ref,
                f"Service {svc.name} targets port {target}, which its pods do not declare",
                rule="target-port-unnamed" if isinstance(target, str) else "target-port-undeclared",
                severity=severity,
                evidence=(
                    f"port {port.get('name') or port.get('port')} -> targetPort {target}; "
                    f"selected containers serve {served}"
                ),
                related=[w.ref for w in workloads],
                params={
                    "port_index": index,
                    "port_name": port.get("name"),
                    "target_port": target,
                    "served_ports": served,
                },
            )


def _target(port: dict[str, object] | object) -> int | str | None:
    port = mapping(port)
    target = port.get("targetPort") or port.get("port")  # 0 and "" default to port
    if isinstance(target, bool) or not isinstance(target, int | str):
        return None
    if isinstance(target, str) and target.isdigit():
        return int(target)
    return target
