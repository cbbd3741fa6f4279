"""Who calls whom: service addresses found in workloads' environment.

Microservice manifests wire services together through env values such as
``CART_ADDR=cart:7070`` or ``http://user-service:8080/api``. This module finds
those addresses and resolves their hosts to Services of the snapshot. It is
the dependency graph for the detectors (a Service others call), for the sim's
traffic model and for the architecture summary.

The heuristic, chosen to stay silent on correct real-world apps:
- a value is an address if it is a URL (``scheme://host[:port]``) or ``host:port``
  with a numeric port; several may be separated by commas or spaces;
- a bare host (no port) counts only when the variable's name says it is one
  (ends in ``_HOST``, ``_ADDR``, ``_ADDRESS``, ``_SERVICE_HOST``);
- a host is *in-cluster* if it is a single DNS label other than ``localhost``,
  or ``name.namespace``, ``name.namespace.svc`` or ``name.namespace.svc.<domain>``
  with a namespace present in the snapshot; anything else (``api.stripe.com``,
  an IP) is external and never judged;
- in-cluster hosts resolve to a Service of that name in that namespace, else to None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.snapshot import Container, Obj, Snapshot, Workload

_URL = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/\s]*@)?(?P<host>[^:/\s?#]+)(?::(?P<port>\d{1,5}))?"
)
_HOSTPORT = re.compile(r"^(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(?P<port>\d{1,5})$")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_HOST_NAMES = ("_HOST", "_ADDR", "_ADDRESS")
_LOCAL = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})


@dataclass(frozen=True)
class Address:
    host: str
    port: int | None
    scheme: str = ""


@dataclass(frozen=True)
class Call:
    """One address in one env var of one container, resolved against the snapshot."""

    caller: Workload
    container: Container
    env: str
    env_index: int
    address: Address
    service_name: str  # the Service this in-cluster host names
    namespace: str  # the namespace the host resolves in
    service: Obj | None  # None: no such Service


def parse_addresses(name: str, value: str) -> list[Address]:
    out: list[Address] = []
    for part in re.split(r"[,\s]+", value.strip()):
        if not part:
            continue
        m = _URL.match(part)
        if m:
            port = int(m["port"]) if m["port"] else None
            out.append(Address(m["host"].lower(), port, m["scheme"]))
            continue
        m = _HOSTPORT.match(part)
        if m:
            out.append(Address(m["host"].lower(), int(m["port"])))
            continue
        if name.upper().endswith(_HOST_NAMES) and _LABEL.match(part.lower()):
            out.append(Address(part.lower(), None))
    return [a for a in out if a.port is None or 0 < a.port < 65536]


def in_cluster_target(host: str, namespace: str, namespaces: set[str]) -> tuple[str, str] | None:
    """(service name, namespace) an in-cluster host names, or None for external hosts."""
    if host in _LOCAL:
        return None
    parts = host.split(".")
    if len(parts) == 1:
        return (host, namespace) if _LABEL.match(host) else None
    if parts[1] in namespaces and (len(parts) == 2 or parts[2] == "svc"):
        return parts[0], parts[1]
    return None


def calls(snapshot: Snapshot) -> list[Call]:
    """Every in-cluster address in every workload's env, in a stable order."""
    return snapshot.derived("topology.calls", lambda: list(_calls(snapshot)))


def callers_of(snapshot: Snapshot, service: Obj) -> list[Call]:
    return [
        c
        for c in calls(snapshot)
        if c.service is not None and c.service.ref == service.ref and c.caller.ref != service.ref
    ]


def _calls(snapshot: Snapshot) -> Iterator[Call]:
    namespaces = snapshot.namespaces()
    for wl in snapshot.workloads():
        for container in wl.containers():
            for index, env in enumerate(container.env):
                value = env.get("value")
                if not isinstance(value, str):
                    continue
                name = str(env.get("name", ""))
                for address in parse_addresses(name, value):
                    target = in_cluster_target(address.host, wl.obj.namespace, namespaces)
                    if target is None:
                        continue
                    svc = snapshot.get("Service", target[1], target[0])
                    yield Call(wl, container, name, index, address, target[0], target[1], svc)
