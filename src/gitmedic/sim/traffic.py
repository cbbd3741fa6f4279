"""The traffic model: entry points, who calls whom, and whether a request gets through.

Entry points are the Services users reach: those annotated
``gitmedic.dev/entrypoint`` if any are, else every Service that fronts a
workload and that no other workload calls. The call graph is the detectors'
own (:func:`gitmedic.detectors.topology.calls`: service addresses in env).

A request to a Service succeeds in the share of its ready endpoints that can
answer: the port the caller uses is one of the Service's, the pod serves the
target port (declared, or served by the image in the baseline, or a pod that
declares no ports), no NetworkPolicy blocks the caller, the pod runs the code it
should (not another service's command), and every call that pod makes in turn
succeeds. A caller whose DNS cannot resolve cluster names fails every call.
Runtime perturbations (the B-class faults) add errors and latency to a Service.
Everything is a pure function of the observed state, so it is deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.detectors.topology import Call, calls, in_cluster_target, parse_addresses
from gitmedic.sim import ids
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.cluster import Observed
from gitmedic.sim.netpol import Peer, allows, dns_ok
from gitmedic.sim.network import PodIndex, resolve_port
from gitmedic.sim.pods import PodView

ENTRYPOINT_ANNOTATION = "gitmedic.dev/entrypoint"
CLUSTER_DNS = "10.96.0.10"
SvcKey = tuple[str, str]


@dataclass(frozen=True)
class Perturbation:
    """A runtime fault on one Service: a share of its answers fail, or slow down."""

    namespace: str
    service: str
    error_rate: float = 0.0
    latency_ms: float = 0.0
    reason: str = ""


@dataclass(frozen=True)
class Result:
    success_rate: float
    latency_ms: float
    why: str = ""  # the first failure on the way, for people


@dataclass(frozen=True)
class Traffic:
    entrypoints: Mapping[str, Result]  # "namespace/service" -> result
    # every Service that fronts a workload, asked from outside: where a break sits
    services: Mapping[str, Result] = field(default_factory=dict)

    def to_json(self) -> dict[str, dict[str, float]]:
        return {
            k: {"success_rate": r.success_rate, "latency_ms": r.latency_ms}
            for k, r in sorted(self.entrypoints.items())
        }


def entrypoints(desired: Snapshot) -> list[Obj]:
    services = desired.of_kind("Service")
    marked = [
        s
        for s in services
        if str(s.annotations.get(ENTRYPOINT_ANNOTATION, "")).lower() in ("true", "1", "yes")
    ]
    if marked:
        return sorted(marked, key=lambda s: s.ref)
    # A caller no Service fronts is a client (a load generator), not a service: what it
    # calls is still where users come in.
    served = {w.ref for s in services for w in _fronted(desired, s)}
    called = {
        c.service.ref for c in calls(desired) if c.service is not None and c.caller.ref in served
    }
    return sorted(
        (
            s
            for s in services
            if s.ref not in called
            and s.spec.get("selector")
            and desired.workloads_selected_by(s.namespace, mapping(s.spec.get("selector")))
        ),
        key=lambda s: s.ref,
    )


def _fronted(desired: Snapshot, svc: Obj) -> list[Workload]:
    selector = mapping(svc.spec.get("selector"))
    return desired.workloads_selected_by(svc.namespace, selector) if selector else []


def measure(
    observed: Observed,
    catalog: ImageCatalog,
    perturbations: Iterable[Perturbation] = (),
    seed: int = 0,
) -> Traffic:
    model = _Model(observed, catalog, perturbations, seed)
    entry = {f"{s.namespace}/{s.name}" for s in entrypoints(observed.desired)}
    out = {}
    for svc in observed.desired.of_kind("Service"):
        if _fronted(observed.desired, svc):
            result = model.service(svc.namespace, svc.name, None, None)
            out[f"{svc.namespace}/{svc.name}"] = Result(
                round(result.success_rate, 4), round(result.latency_ms, 1), result.why
            )
    return Traffic({k: v for k, v in out.items() if k in entry}, out)


class _Model:
    def __init__(
        self,
        observed: Observed,
        catalog: ImageCatalog,
        perturbations: Iterable[Perturbation],
        seed: int,
    ) -> None:
        self.desired = observed.desired
        self.catalog = catalog
        self.seed = seed
        self.index = PodIndex(observed.pods)
        self.faults: dict[SvcKey, list[Perturbation]] = defaultdict(list)
        for p in perturbations:
            self.faults[(p.namespace, p.service)].append(p)
        self.by_caller: dict[tuple[str, str, str], list[Call]] = defaultdict(list)
        for call in calls(self.desired):
            self.by_caller[
                (call.caller.obj.kind, call.caller.obj.namespace, call.caller.obj.name)
            ].append(call)
        self.memo: dict[tuple[SvcKey, int | None, Peer | None], Result] = {}
        self.visiting: set[SvcKey] = set()

    def service(self, namespace: str, name: str, port: int | None, caller: Peer) -> Result:
        key = ((namespace, name), port, _freeze(caller))
        if key in self.memo:
            return self.memo[key]
        if (namespace, name) in self.visiting:
            return Result(1.0, 0.0)  # a cycle: judged where it started
        self.visiting.add((namespace, name))
        result = self._service(namespace, name, port, caller)
        self.visiting.discard((namespace, name))
        self.memo[key] = result
        return result

    def _service(self, namespace: str, name: str, port: int | None, caller: Peer) -> Result:
        svc = self.desired.get("Service", namespace, name)
        if svc is None:
            return Result(0.0, 0.0, f"{namespace}/{name}: no such Service (DNS lookup fails)")
        ports = [mapping(p) for p in as_list(svc.spec.get("ports"))]
        chosen = next((p for p in ports if port is None or p.get("port") == port), None)
        if chosen is None:
            return Result(0.0, 0.0, f"{name}: port {port} is not a port of the Service")
        pods = [p for p in self.index.selected(svc) if p.ready]
        if not pods:
            return Result(0.0, 0.0, f"{name}: no ready endpoints")
        own = self._base_latency(namespace, name, pods)
        answers = [self._pod_answer(svc, chosen, pod, caller) for pod in pods]
        rate = sum(a.success_rate for a in answers) / len(answers)
        latency = own + max(a.latency_ms for a in answers)
        for fault in self.faults.get((namespace, name), []):
            rate *= 1.0 - fault.error_rate
            latency += fault.latency_ms
        why = next((a.why for a in answers if a.why), "")
        if self.faults.get((namespace, name)) and not why:
            why = f"{name}: {self.faults[(namespace, name)][0].reason}"
        return Result(rate, latency, why)

    def _pod_answer(
        self, svc: Obj, port: Mapping[str, object], pod: PodView, caller: Peer
    ) -> Result:
        target = resolve_port(port, pod)
        if target is None or not self._serves(pod, target):
            return Result(
                0.0,
                0.0,
                f"{svc.name}: pod {pod.body['metadata']['name']} does not serve port {target}",
            )
        labels = pod.body["metadata"]["labels"]
        if not allows(self.desired, caller, (svc.namespace, labels), target):
            return Result(0.0, 0.0, f"{svc.name}: a NetworkPolicy blocks the connection (timeout)")
        if pod.misbehaves:
            return Result(
                0.0,
                0.0,
                f"{svc.name}: pod {pod.body['metadata']['name']} runs another service's command",
            )
        if not self._intended(svc, pod):
            return Result(
                0.0,
                0.0,
                f"{svc.name}: endpoint {pod.body['metadata']['name']} belongs to another workload",
            )
        return self._downstream(pod)

    def _downstream(self, pod: PodView) -> Result:
        wl = self._workload_of(pod)
        if wl is None:
            return Result(1.0, 0.0)
        me: Peer = (wl.obj.namespace, {str(k): str(v) for k, v in wl.template_labels.items()})
        rate, latency, why = 1.0, 0.0, ""
        lost = _lost_wiring(
            wl, self.catalog.wiring.get((wl.obj.namespace, wl.obj.name), frozenset())
        )
        if lost:
            return Result(0.0, 0.0, f"{wl.obj.name}: env {lost} no longer addresses its Service")
        for call in self.by_caller.get((wl.obj.kind, wl.obj.namespace, wl.obj.name), []):
            if not _effective(call):
                continue
            if (call.namespace, call.service_name) in self.catalog.optional:
                continue
            if not _resolves(wl) or not dns_ok(self.desired, me):
                hop = Result(0.0, 0.0, f"{wl.obj.name}: cannot resolve {call.address.host} (DNS)")
            else:
                hop = self.service(call.namespace, call.service_name, call.address.port, me)
            rate *= hop.success_rate
            latency = max(latency, hop.latency_ms)
            why = why or (f"{wl.obj.name} -> {hop.why}" if hop.why else "")
        return Result(rate, latency, why)

    def _serves(self, pod: PodView, port: int) -> bool:
        containers = [mapping(c) for c in as_list(pod.body["spec"].get("containers"))]
        for c in containers:
            declared = [mapping(p).get("containerPort") for p in as_list(c.get("ports"))]
            if port in declared or self.catalog.serves(str(c.get("image", "")), port):
                return True
        return not any(as_list(c.get("ports")) for c in containers)

    def _intended(self, svc: Obj, pod: PodView) -> bool:
        owners = {self._owner_name(p) for p in self.index.selected(svc)}
        if len(owners) < 2:
            return True
        # Several workloads behind one Service: the one named like the Service is meant.
        meant = min(
            owners,
            key=lambda o: (
                not (o == svc.name or svc.name.startswith(o) or o.startswith(svc.name)),
                o,
            ),
        )
        return self._owner_name(pod) == meant

    def _owner_name(self, pod: PodView) -> str:
        wl = self._workload_of(pod)
        return wl.obj.name if wl else str(pod.body["metadata"]["name"])

    def _workload_of(self, pod: PodView) -> Workload | None:
        owner = (pod.body["metadata"].get("ownerReferences") or [{}])[0]
        name = str(owner.get("name", pod.body["metadata"]["name"]))
        kind = str(owner.get("kind", "Pod"))
        if kind == "ReplicaSet":
            kind, name = "Deployment", name.rsplit("-", 1)[0]
        return self.desired.derived(
            "sim.workloads", lambda: {(w.obj.kind, w.obj.name): w for w in self.desired.workloads()}
        ).get((kind, name))

    def _base_latency(self, namespace: str, name: str, pods: list[PodView]) -> float:
        base = ids.between(2.0, 8.0, "latency", self.seed, namespace, name)
        return base * max((_throttle(p) for p in pods), default=1.0)


def _throttle(pod: PodView) -> float:
    factor = 1.0
    for c in as_list(pod.body["spec"].get("containers")):
        limit = mapping(mapping(mapping(c).get("resources")).get("limits")).get("cpu")
        from gitmedic.sim.quantity import millicores

        cap = millicores(limit)
        use = (
            millicores(
                pod.body["metadata"]
                .get("annotations", {})
                .get(f"sim.gitmedic.dev/cpu-usage-{mapping(c).get('name')}")
            )
            or 50
        )
        if cap:
            factor = max(factor, use / cap)
    return factor


def _lost_wiring(wl: Workload, wired: frozenset[str]) -> str:
    """An env var that addressed a Service in the baseline and now does not (or is gone)."""
    missing = sorted(wired - _all_env(wl))
    if missing:
        return missing[0]
    for c in wl.containers():
        last = {str(e.get("name")): e.get("value") for e in c.env}
        for name in sorted(wired & set(last)):
            if not _addresses_cluster(name, last[name], wl.obj.namespace):
                return name
    return ""


def _addresses_cluster(name: str, value: object, namespace: str) -> bool:
    if not isinstance(value, str):
        return False
    return any(
        in_cluster_target(a.host, namespace, {namespace}) for a in parse_addresses(name, value)
    )


def _all_env(wl: Workload) -> set[str]:
    return {str(e.get("name")) for c in wl.containers() for e in c.env}


def _effective(call: Call) -> bool:
    """Only the last of duplicate env names counts (the kubelet's rule)."""
    names = [str(e.get("name")) for e in call.container.env]
    return len(names) - 1 - names[::-1].index(call.env) == call.env_index


def _resolves(wl: Workload) -> bool:
    if wl.pod_spec.get("dnsPolicy") != "None":
        return True
    servers = as_list(mapping(wl.pod_spec.get("dnsConfig")).get("nameservers"))
    return CLUSTER_DNS in servers


def _freeze(peer: Peer) -> Peer | None:
    if peer is None:
        return None
    return (peer[0], tuple(sorted(peer[1].items())))  # type: ignore[return-value]
