"""A liveness, readiness or startup probe aimed at a port its container does not declare.

A probe port is a number or a port name (``httpGet``, ``tcpSocket``; ``grpc``
takes a number). A name that no port of the container carries cannot resolve:
the kubelet fails the probe every time (critical: liveness restarts the pod
forever, readiness keeps it out of its Service). A number the container does not
declare, while it declares other ports, most likely misses the listener (the
SREGym fault moves the probe off the served port), but health endpoints often
live on an undeclared admin port (jaeger's 14269, the collector's 13133), so it
is a warning only when another probe of the same container aims at a declared
port (the probes disagree, one was moved), and info otherwise. A container
that declares no ports at all tells us nothing and is not judged; neither are
probes sent to another ``host`` nor ``exec`` probes.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._references import pod_spec_path
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import JSON, Container, Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="probe-port",
    description=(
        "A liveness, readiness or startup probe targets a port (number or name) "
        "that its container does not declare."
    ),
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.CRITICAL,
    remediation="Point the probe at the port the container serves (restore its previous port).",
    scope=Scope.BOTH,
    certain_because=(
        "critical only for a port name no port of the container carries, which the kubelet "
        "cannot resolve; an undeclared number is a warning or info"
    ),
    playbooks=("liveness-probe-wrong", "readiness-probe-wrong"),
)

PROBES = (
    ("livenessProbe", "liveness"),
    ("readinessProbe", "readiness"),
    ("startupProbe", "startup"),
)
HANDLERS = ("httpGet", "tcpSocket", "grpc")


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        base = pod_spec_path(wl.obj.kind)
        for section, containers in (("containers", False), ("initContainers", True)):
            for index, container in enumerate(c for c in wl.containers() if c.init is containers):
                if not container.ports:
                    continue
                path = f"{base}.{section}[{index}]"
                yield from _container_findings(wl, container, path)


def _container_findings(wl: Workload, container: Container, path: str) -> Iterator[Finding]:
    declared = sorted(
        {str(p.get("name") or p.get("containerPort")) for p in container.ports}, key=str
    )
    for field, probe_kind in PROBES:
        probe = mapping(container.body.get(field))
        for handler in HANDLERS:
            action = mapping(probe.get(handler))
            port = _port(action)
            if port is None or action.get("host") or container.serves(port):
                continue
            named = isinstance(port, str)
            moved = _probes_declared_port(container)
            yield SPEC.finding(
                wl.ref,
                f"{container.name}: {probe_kind} probe on port {port}, "
                f"which the container does not declare",
                rule=f"{probe_kind}-probe-port",
                severity=Severity.CRITICAL if named else _numeric_severity(moved),
                evidence=f"{field}.{handler}.port {port}; container ports {declared}",
                params={
                    "container": container.name,
                    "container_field": container.list_field,
                    "probe": field,
                    "handler": handler,
                    "path": f"{path}.{field}.{handler}.port",
                    "port": port,
                    "declared_ports": _declared_numbers(container),
                },
            )


def _numeric_severity(other_probe_declared: bool) -> Severity:
    return Severity.WARNING if other_probe_declared else Severity.INFO


def _probes_declared_port(container: Container) -> bool:
    """Does any probe of the container aim at a port the container declares?"""
    for field, _ in PROBES:
        probe = mapping(container.body.get(field))
        for handler in HANDLERS:
            port = _port(mapping(probe.get(handler)))
            if port is not None and container.serves(port):
                return True
    return False


def _port(action: JSON) -> int | str | None:
    port = action.get("port")
    if isinstance(port, bool) or not isinstance(port, int | str) or port in ("", 0):
        return None
    if isinstance(port, str) and port.isdigit():
        return int(port)
    return port


def _declared_numbers(container: Container) -> list[int]:
    return sorted(
        {p["containerPort"] for p in container.ports if isinstance(p.get("containerPort"), int)}
    )
