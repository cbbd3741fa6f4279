"""An Ingress backend naming a Service that is absent, or a port that Service lacks.

Both the ``defaultBackend`` and every ``rules[].http.paths[].backend`` are read,
in the ``networking.k8s.io/v1`` shape (``service: {name, port: {number|name}}``)
and the older ``extensions/v1beta1`` one (``serviceName``, ``servicePort``).
A port number must be one of the Service's ``port`` values, a port name one of
its port names. Backends that point at a ``resource`` instead of a Service, and
ExternalName Services (any port passes through), are not judged. The misroute
to an existing but wrong Service cannot be seen here; that takes the traffic
oracles.

Rules: ``service-missing`` and ``port-missing``, both critical (the controller
answers 503 for that path). In desired state a missing Service is a warning when
a custom resource of the namespace may create it (operators create Services for
the pods they run: the Prometheus operator's ``prometheus-operated``).

The AWS Load Balancer Controller's port name ``use-annotation`` is no Service port:
the backend is the action that the Ingress annotation
``alb.ingress.kubernetes.io/actions.<service>`` describes (rule ``action-missing``
when it is absent, critical). Argo Rollouts' ALB traffic routing writes that
annotation at runtime, so in desired state an Ingress a Rollout routes through is a
warning saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.builtin._services import custom_pod_owners, named
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty

OPERATOR_SERVICE = Uncertainty(
    id="service-from-custom-resource",
    unseen="a Service an operator creates for a custom resource of the namespace",
    certain_if="the operator creates no Service of that name",
)

ALB_ACTION_AT_RUNTIME = Uncertainty(
    id="alb-action-at-runtime",
    unseen="the ALB action annotation a Rollout's traffic routing writes at runtime",
    certain_if="no Rollout routes its canary through this Ingress",
)
ALB_ACTION_PORT = "use-annotation"
ALB_ACTIONS = "alb.ingress.kubernetes.io/actions."

SPEC = DetectorSpec(
    id="ingress-backend",
    description=(
        "An Ingress backend names a Service that does not exist, or a port it does not expose."
    ),
    kinds=frozenset({"Ingress", "Service"}),
    severity=Severity.CRITICAL,
    remediation="Point the backend at the Service and port it routed to before.",
    scope=Scope.BOTH,
    playbooks=("ingress-misroute",),
    uncertain_when=(OPERATOR_SERVICE, ALB_ACTION_AT_RUNTIME),
)


@dataclass(frozen=True)
class Backend:
    path: str  # JSON path of the backend inside the Ingress
    service: str
    port: int | str | None
    route: str  # host and HTTP path, for people


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for ingress in snapshot.of_kind("Ingress"):
        for backend in backends(ingress):
            if backend.port == ALB_ACTION_PORT:
                yield from _alb_action(snapshot, ingress, backend)
                continue
            svc = snapshot.get("Service", ingress.namespace, backend.service)
            if svc is None:
                yield _missing(snapshot, ingress, backend)
            elif backend.port is not None and not _exposes(svc, backend.port):
                what = f"Service {backend.service} has no port {backend.port}"
                yield _finding(ingress, backend, "port-missing", what, svc)


def _alb_action(snapshot: Snapshot, ingress: Obj, backend: Backend) -> Iterator[Finding]:
    """An ALB action backend: judged by its annotation, not by the Service's ports."""
    annotations = mapping(mapping(ingress.body.get("metadata")).get("annotations"))
    if f"{ALB_ACTIONS}{backend.service}" in annotations:
        return
    what = f"no annotation {ALB_ACTIONS}{backend.service} describes its action"
    writers = [] if snapshot.live else _alb_routers(snapshot, ingress)
    if not writers:
        yield _finding(ingress, backend, "action-missing", what)
        return
    what += (
        f"; {named(writers)} writes it at runtime (ALB traffic routing; certain if "
        f"{ALB_ACTION_AT_RUNTIME.certain_if})"
    )
    yield _finding(ingress, backend, "action-missing", what, severity=Severity.WARNING)


def _alb_routers(snapshot: Snapshot, ingress: Obj) -> list[Obj]:
    """The Rollouts whose canary traffic routing manages this Ingress's ALB actions."""
    found = []
    for rollout in snapshot.of_kind("Rollout"):
        if rollout.namespace != ingress.namespace:
            continue
        canary = mapping(mapping(rollout.spec.get("strategy")).get("canary"))
        alb = mapping(mapping(canary.get("trafficRouting")).get("alb"))
        managed = {str(alb.get("ingress") or ""), *map(str, as_list(alb.get("ingresses")))}
        if ingress.name in managed:
            found.append(rollout)
    return found


def _missing(snapshot: Snapshot, ingress: Obj, backend: Backend) -> Finding:
    what = f"Service {backend.service} does not exist"
    owners = [] if snapshot.live else custom_pod_owners(snapshot, ingress.namespace)
    if not owners:
        return _finding(ingress, backend, "service-missing", what)
    what += (
        f" in the manifests; {named(owners)} may create it through its operator (certain if "
        f"{OPERATOR_SERVICE.certain_if})"
    )
    return _finding(ingress, backend, "service-missing", what, severity=Severity.WARNING)


def backends(ingress: Obj) -> Iterator[Backend]:
    default = _backend(mapping(ingress.spec.get("defaultBackend") or ingress.spec.get("backend")))
    if default is not None:
        field = "defaultBackend" if "defaultBackend" in ingress.spec else "backend"
        yield Backend(f"spec.{field}", *default, "(default)")
    for i, rule in enumerate(map(mapping, as_list(ingress.spec.get("rules")))):
        host = str(rule.get("host") or "*")
        paths = as_list(mapping(rule.get("http")).get("paths"))
        for j, entry in enumerate(map(mapping, paths)):
            found = _backend(mapping(entry.get("backend")))
            if found is not None:
                route = f"{host}{entry.get('path') or '/'}"
                yield Backend(f"spec.rules[{i}].http.paths[{j}].backend", *found, route)


def _backend(body: JSON) -> tuple[str, int | str | None] | None:
    service = mapping(body.get("service"))
    if service.get("name"):
        port = mapping(service.get("port"))
        return str(service["name"]), _port(port.get("number") or port.get("name"))
    if body.get("serviceName"):
        return str(body["serviceName"]), _port(body.get("servicePort"))
    return None


def _port(value: object) -> int | str | None:
    if isinstance(value, bool) or not isinstance(value, int | str) or value in ("", 0):
        return None
    return int(value) if isinstance(value, str) and value.isdigit() else value


def _exposes(svc: Obj, port: int | str) -> bool:
    if svc.spec.get("type") == "ExternalName":
        return True
    ports = [mapping(p) for p in as_list(svc.spec.get("ports"))]
    key = "name" if isinstance(port, str) else "port"
    return any(p.get(key) == port for p in ports)


def _finding(
    ingress: Obj,
    backend: Backend,
    rule: str,
    what: str,
    svc: Obj | None = None,
    severity: Severity | None = None,
) -> Finding:
    ports = [mapping(p) for p in as_list(svc.spec.get("ports"))] if svc else []
    offered = [p.get("name") or p.get("port") for p in ports]
    return SPEC.finding(
        ingress.ref,
        f"Ingress {ingress.name} route {backend.route}: {what}",
        rule=rule,
        severity=severity,
        evidence=f"{backend.path} -> {backend.service}:{backend.port}"
        + (f"; Service ports {offered}" if svc else ""),
        related=[Resource("Service", ingress.namespace, backend.service)],
        params={
            "path": backend.path,
            "route": backend.route,
            "service": backend.service,
            "port": backend.port,
            "service_ports": [{"name": p.get("name"), "port": p.get("port")} for p in ports],
        },
    )
