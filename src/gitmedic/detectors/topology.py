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
  (ends in ``_HOST``, ``_ADDR``, ``_ADDRESS``, ``_SERVICE_HOST``); its port is
  then read from the sibling ``<PREFIX>_PORT`` variable of the same container
  when that holds a number (``FLAGD_HOST=flagd`` + ``FLAGD_PORT=8013``);
- ``$(VAR)`` references are expanded as the kubelet does, from variables with
  a literal value defined earlier in the same container (``$$`` escapes); a
  reference that cannot be expanded leaves the value unjudged;
- a host is *in-cluster* if it is a single DNS label other than ``localhost``,
  or ``name.namespace``, ``name.namespace.svc`` or ``name.namespace.svc.<domain>``
  with a namespace present in the snapshot; anything else (``api.stripe.com``,
  an IP) is external and never judged;
- in-cluster hosts resolve to a Service of that name in that namespace, else to None.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import (
    Container,
    Obj,
    Snapshot,
    Workload,
    mapping,
    selector_matches,
)

_URL = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/\s]*@)?(?P<host>[^:/\s?#]+)(?::(?P<port>\d{1,5}))?"
)
_HOSTPORT = re.compile(r"^(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(?P<port>\d{1,5})$")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_HOST_NAMES = ("_HOST", "_ADDR", "_ADDRESS")
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
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
    port_env: str = ""  # the sibling variable the port came from, if not from ``env``


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
    """Calls that reach ``service`` from a workload other than the one it fronts."""
    by_service = snapshot.derived("topology.callers", lambda: _index_by_service(calls(snapshot)))
    selector = mapping(service.spec.get("selector"))
    return [
        c
        for c in by_service.get(service.ref, [])
        if not (
            c.caller.obj.namespace == service.namespace
            and selector_matches(selector, c.caller.template_labels)
        )
    ]


def expand_references(value: str, defined: Mapping[str, str]) -> str:
    """Expand ``$(VAR)`` from ``defined`` like the kubelet; unknown references stay as they are."""

    def one(m: re.Match[str]) -> str:
        if m[0] == "$$":
            return "$"
        return defined.get(m[1], m[0])

    return _REFERENCE.sub(one, value)


def _index_by_service(all_calls: list[Call]) -> dict[Resource, list[Call]]:
    index: dict[Resource, list[Call]] = defaultdict(list)
    for call in all_calls:
        if call.service is not None:
            index[call.service.ref].append(call)
    return index


def _calls(snapshot: Snapshot) -> Iterator[Call]:
    namespaces = snapshot.namespaces()
    for wl in snapshot.workloads():
        for container in wl.containers():
            for index, name, address, port_env in _container_addresses(container):
                target = in_cluster_target(address.host, wl.obj.namespace, namespaces)
                if target is None:
                    continue
                svc = snapshot.get("Service", target[1], target[0])
                yield Call(wl, container, name, index, address, target[0], target[1], svc, port_env)


def _container_addresses(container: Container) -> Iterator[tuple[int, str, Address, str]]:
    """(env index, env name, address, port variable) for each address in a container's env."""
    expanded: dict[str, str] = {}
    values: list[tuple[int, str, str]] = []
    for index, env in enumerate(container.env):
        value = env.get("value")
        name = str(env.get("name", ""))
        if isinstance(value, str):
            value = expand_references(value, expanded)
            expanded[name] = value
            values.append((index, name, value))
    for index, name, value in values:
        for address in parse_addresses(name, value):
            if address.port is not None or not name.upper().endswith(_HOST_NAMES):
                yield index, name, address, ""
                continue
            port_env = _port_variable(name)
            port = expanded.get(port_env, "")
            if port.isdigit() and 0 < int(port) < 65536:
                yield index, name, replace(address, port=int(port)), port_env
            else:
                yield index, name, address, ""


def _port_variable(host_variable: str) -> str:
    """``FLAGD_UI_HOST`` -> ``FLAGD_UI_PORT`` (and the same for ``_ADDR``/``_ADDRESS``)."""
    prefix = host_variable.rsplit("_", 1)[0]
    return f"{prefix}_PORT"
