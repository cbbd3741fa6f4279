"""Every fix recipe, bound to a finding from a fault injected into a real app, undoes it.

For each case: the app (plus any base objects) is the known-good state; the fault
changes a copy; the detector runs on the faulted state (for live detectors, with
pods in the state kubelet would report); the playbook binds to its finding; each
bound path is restored from the good object, as the responder restores fields
from Git history. The result must be the good object exactly, at least one bound
path must hold the injected value, and fallbacks (where the case says the
params know it) must equal the good value.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest

from gitmedic.bot.responder.playbooks import bind, builtin_playbooks
from gitmedic.detectors import Mode, Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import real_apps
from tests.responder.fieldpaths import MISSING, get, restore

Body = dict[str, Any]
Edit = Callable[[Body], None]
BOOKS = {b.id: b for b in builtin_playbooks()}
REGISTRY = builtin_registry()
# Kubernetes' value for a field that is absent: a fallback may equal it.
DEFAULTS = {"dnsPolicy": "ClusterFirst", "internalTrafficPolicy": "Cluster", "replicas": 1}
T0, T1 = "2024-05-01T10:00:00Z", "2024-05-01T10:20:00Z"


@dataclass(frozen=True)
class Case:
    playbook: str
    detector: str
    app: str
    faults: dict[tuple[str, str], Edit]
    base: dict[tuple[str, str], Edit] = field(default_factory=dict)
    extra: tuple[Body, ...] = ()
    pods: tuple[tuple[str, str, Body, bool], ...] = ()  # (deployment, container, status, init)
    nodes: bool = False
    fallback_known: bool = False


@cache
def _objects(app: str) -> tuple[Obj, ...]:
    a = next(a for a in real_apps() if a.name == app)
    state = load_desired(a.path, namespace=a.namespace)
    return tuple(state.snapshot)


def _state(case: Case, *, faulted: bool) -> dict[Resource, Body]:
    ns = next(a for a in real_apps() if a.name == case.app).namespace
    out = {o.ref: copy.deepcopy(dict(o.body)) for o in _objects(case.app)}
    for body in copy.deepcopy(list(case.extra)):
        body["metadata"].setdefault("namespace", ns)
        out[Resource(body["kind"], ns, body["metadata"]["name"])] = body
    edits = [case.base, case.faults] if faulted else [case.base]
    for edit_set in edits:
        for (kind, name), edit in edit_set.items():
            (ref,) = [r for r in out if (r.kind, r.name) == (kind, name)]
            edit(out[ref])
    return out


def _snapshot(case: Case, bodies: dict[Resource, Body]) -> Snapshot:
    objs = [Obj(ref, body) for ref, body in bodies.items()]
    ns = next(a for a in real_apps() if a.name == case.app).namespace
    for deployment, container, status, init in case.pods:
        objs.append(_pod(ns, deployment, container, status, init))
    if case.nodes:
        objs += [_node(i) for i in range(3)]
    return Snapshot(objs, mode=Mode.LIVE if case.pods else Mode.DESIRED)


def _pod(ns: str, deployment: str, container: str, status: Body, init: bool) -> Obj:
    name = f"{deployment}-7d9f-a"
    meta = {"name": name, "namespace": ns, "creationTimestamp": T1,
            "ownerReferences": [{"kind": "ReplicaSet", "name": f"{deployment}-7d9f",
                                 "controller": True}]}  # fmt: skip
    key = "initContainerStatuses" if init else "containerStatuses"
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"restartPolicy": "Always"},
            "status": {"phase": "Pending", "startTime": T0,
                       key: [{"name": container, **status}]}}  # fmt: skip
    return Obj(Resource("Pod", ns, name), body)


def _node(i: int) -> Obj:
    labels = {"kubernetes.io/hostname": f"worker-{i}", "kubernetes.io/os": "linux",
              "beta.kubernetes.io/os": "linux"}  # fmt: skip
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"worker-{i}", "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}},
    }
    return Obj(Resource("Node", "", f"worker-{i}"), body)


# -- edits ---------------------------------------------------------------------------


def spec(body: Body) -> Body:
    found: Body = body["spec"]["template"]["spec"]
    return found


def ctr(body: Body, name: str, field_name: str = "containers") -> Body:
    found: Body = next(c for c in spec(body)[field_name] if c["name"] == name)
    return found


def env_var(body: Body, container: str, var: str, field_name: str = "containers") -> Body:
    found: Body = next(e for e in ctr(body, container, field_name)["env"] if e["name"] == var)
    return found


def setter(fn: Callable[[Body], None]) -> Edit:
    return fn


CRASH = {
    "restartCount": 5,
    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
    "lastState": {"terminated": {"reason": "Error", "exitCode": 1}},
}
OOM = {
    "restartCount": 5,
    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
    "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
}
PULL = {"state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}
HANG = {"restartCount": 0, "state": {"running": {"startedAt": T0}}}
NO_KEY = {
    "state": {
        "waiting": {
            "reason": "CreateContainerConfigError",
            "message": "couldn't find key demo.flagd.json in ConfigMap otel-demo/flagd-config",
        }
    }
}


def _hpa(target: str) -> Body:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": f"{target}-hpa"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": target}, "minReplicas": 1, "maxReplicas": 3,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 80}}}]}}  # fmt: skip


POLICY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {"name": "cart-ingress"},
    "spec": {
        "podSelector": {"matchLabels": {"app": "cartservice"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {}}]}],
    },
}
INGRESS = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": {"name": "web"},
    "spec": {
        "rules": [
            {
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "frontend", "port": {"number": 80}}},
                        }
                    ]
                }
            }
        ]
    },
}
QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": {"name": "mem"},
    "spec": {"hard": {"requests.memory": "8Gi"}},
}
FLAGD_REF = {
    "name": "FLAGS",
    "valueFrom": {"configMapKeyRef": {"name": "flagd-config", "key": "demo.flagd.json"}},
}


def _tier(body: Body) -> None:
    body["spec"]["template"]["metadata"]["labels"]["tier"] = "backend"


def _anti_affinity(body: Body) -> None:
    body["spec"]["replicas"] = 4
    term = {"labelSelector": {"matchLabels": {"app": "frontend"}},
            "topologyKey": "kubernetes.io/hostname"}  # fmt: skip
    required = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    spec(body)["affinity"] = {"podAntiAffinity": required}


CASES = [
    Case(
        "service-target-port",
        "service-target-port",
        "online-boutique",
        {
            ("Service", "productcatalogservice"): lambda b: b["spec"]["ports"][0].update(
                targetPort=3551
            )
        },
        fallback_known=True,
    ),
    Case(
        "service-selector-mismatch",
        "service-selector-unmatched",
        "online-boutique",
        {("Service", "cartservice"): lambda b: b["spec"]["selector"].update(app="cartservice-v2")},
    ),
    Case(
        "service-selector-polluted",
        "service-selector-polluted",
        "hotel-reservation",
        {("Service", "geo"): lambda b: b["spec"].update(selector={"tier": "backend"})},
        base={
            ("Deployment", "geo"): _tier,
            ("Deployment", "rate"): _tier,
            ("Service", "geo"): lambda b: b["spec"]["selector"].update(tier="backend"),
        },
    ),
    Case(
        "env-shadowed",
        "env-duplicate",
        "online-boutique",
        {
            ("Deployment", "frontend"): lambda b: ctr(b, "server")["env"].append(
                {"name": "CART_SERVICE_ADDR", "value": "localhost:7070"}
            )
        },
    ),
    Case(
        "scaled-to-zero",
        "scaled-to-zero",
        "online-boutique",
        {("Deployment", "cartservice"): lambda b: b["spec"].update(replicas=0)},
        fallback_known=True,
    ),
    Case(
        "nonexistent-node",
        "node-selector-unmatched",
        "sock-shop",
        {
            ("Deployment", "orders"): lambda b: (
                spec(b)
                .setdefault("nodeSelector", {})
                .update({"kubernetes.io/hostname": "extra-node"})
            )
        },
        nodes=True,
    ),
    Case(
        "env-wrong-port",
        "env-service-address",
        "online-boutique",
        {
            ("Deployment", "checkoutservice"): lambda b: env_var(
                b, "server", "PRODUCT_CATALOG_SERVICE_ADDR"
            ).update(value="productcatalogservice:3551")
        },
    ),
    Case(
        "env-wrong-port",
        "env-service-address",
        "astronomy-shop-otel-demo",
        {
            ("Deployment", "frontend-proxy"): lambda b: env_var(
                b, "frontend-proxy", "FRONTEND_PORT"
            ).update(value="8081")
        },
    ),
    Case(
        "liveness-probe-wrong",
        "probe-port",
        "sock-shop",
        {
            ("Deployment", "catalogue"): lambda b: ctr(b, "catalogue")["livenessProbe"][
                "httpGet"
            ].update(port=8081)
        },
    ),
    Case(
        "readiness-probe-wrong",
        "probe-port",
        "sock-shop",
        {
            ("Deployment", "catalogue"): lambda b: ctr(b, "catalogue")["readinessProbe"][
                "httpGet"
            ].update(port=8081)
        },
    ),
    Case(
        "liveness-probe-aggressive",
        "liveness-probe-aggressive",
        "online-boutique",
        {
            ("Deployment", "productcatalogservice"): lambda b: ctr(b, "server")[
                "livenessProbe"
            ].update(initialDelaySeconds=0, periodSeconds=1, failureThreshold=1)
        },
    ),
    Case(
        "memory-limit-too-small",
        "memory-limit-too-small",
        "online-boutique",
        {
            ("Deployment", "cartservice"): lambda b: ctr(b, "server")["resources"]["limits"].update(
                memory="10Mi"
            )
        },
    ),
    Case(
        "memory-limit-too-small",
        "memory-limit-below-request",
        "online-boutique",
        {
            ("Deployment", "adservice"): lambda b: ctr(b, "server")["resources"]["limits"].update(
                memory="100Mi"
            )
        },
    ),
    Case(
        "cpu-limit-too-tight",
        "memory-limit-below-request",
        "online-boutique",
        {
            ("Deployment", "cartservice"): lambda b: ctr(b, "server")["resources"]["limits"].update(
                cpu="10m"
            )
        },
    ),
    Case(
        "request-too-large",
        "request-too-large",
        "online-boutique",
        {
            ("Deployment", "adservice"): lambda b: ctr(b, "server")["resources"]["requests"].update(
                memory="32Gi"
            )
        },
        nodes=True,
    ),
    Case(
        "missing-configmap",
        "missing-reference",
        "astronomy-shop-otel-demo",
        {
            ("Deployment", "flagd"): lambda b: next(
                v for v in spec(b)["volumes"] if "configMap" in v
            )["configMap"].update(name="flagd-config-v2")
        },
    ),
    Case(
        "configmap-key-dropped",
        "missing-reference",
        "astronomy-shop-otel-demo",
        {("ConfigMap", "flagd-config"): lambda b: b["data"].pop("demo.flagd.json")},
        base={
            ("Deployment", "cart"): lambda b: ctr(b, "cart").setdefault("env", []).append(FLAGD_REF)
        },
    ),
    Case(
        "configmap-key-dropped",
        "pod-config-error",
        "astronomy-shop-otel-demo",
        {("ConfigMap", "flagd-config"): lambda b: b["data"].pop("demo.flagd.json")},
        pods=(("cart", "cart", NO_KEY, False),),
    ),
    Case(
        "pvc-claim-broken",
        "missing-reference",
        "hotel-reservation",
        {
            ("Deployment", "mongodb-user"): lambda b: spec(b)["volumes"][0][
                "persistentVolumeClaim"
            ].update(claimName="user-pvc-broken")
        },
    ),
    Case(
        "rwo-pvc-shared",
        "rwo-pvc-shared",
        "hotel-reservation",
        {("Deployment", "mongodb-user"): lambda b: b["spec"].update(replicas=2)},
    ),
    Case(
        "anti-affinity-deadlock",
        "anti-affinity-deadlock",
        "online-boutique",
        {("Deployment", "frontend"): _anti_affinity},
        nodes=True,
    ),
    Case(
        "sidecar-port-conflict",
        "container-port-conflict",
        "astronomy-shop-otel-demo",
        {
            ("Deployment", "flagd"): lambda b: ctr(b, "flagd-ui")["ports"][0].update(
                containerPort=8013
            )
        },
    ),
    Case(
        "host-port-conflict",
        "host-port-conflict",
        "online-boutique",
        {
            ("Deployment", "adservice"): lambda b: ctr(b, "server")["ports"][0].update(
                hostPort=9555
            ),
            ("Deployment", "emailservice"): lambda b: ctr(b, "server")["ports"][0].update(
                hostPort=9555
            ),
        },
    ),
    Case(
        "rollout-strategy-unsafe",
        "rollout-strategy-unsafe",
        "hotel-reservation",
        {
            ("Deployment", "search"): lambda b: b["spec"]["strategy"].update(
                rollingUpdate={"maxUnavailable": "100%", "maxSurge": 0}
            )
        },
        base={
            ("Deployment", "search"): lambda b: b["spec"].update(
                strategy={
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
                }
            )
        },
        fallback_known=True,
    ),
    Case(
        "dns-policy-none",
        "dns-policy-none",
        "online-boutique",
        {
            ("Deployment", "frontend"): lambda b: spec(b).update(
                dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]}
            )
        },
        fallback_known=True,
    ),
    Case(
        "network-policy-deny-all",
        "network-policy-isolation",
        "online-boutique",
        {("NetworkPolicy", "cart-ingress"): lambda b: b["spec"].update(ingress=[])},
        extra=(POLICY,),
    ),
    Case(
        "internal-traffic-policy-local",
        "internal-traffic-policy-local",
        "online-boutique",
        {("Service", "cartservice"): lambda b: b["spec"].update(internalTrafficPolicy="Local")},
        fallback_known=True,
    ),
    Case(
        "ingress-misroute",
        "ingress-backend",
        "online-boutique",
        {
            ("Ingress", "web"): lambda b: b["spec"]["rules"][0]["http"]["paths"][0]["backend"][
                "service"
            ].update(name="frontend-v2")
        },
        extra=(INGRESS,),
    ),
    Case(
        "hpa-no-cpu-request",
        "hpa-no-cpu-request",
        "online-boutique",
        {
            ("Deployment", "cartservice"): lambda b: ctr(b, "server")["resources"]["requests"].pop(
                "cpu"
            )
        },
        base={
            ("Deployment", "cartservice"): lambda b: ctr(b, "server")["resources"]["limits"].pop(
                "cpu"
            )
        },
        extra=(_hpa("cartservice"),),
    ),
    Case(
        "hpa-target-missing",
        "hpa-target-missing",
        "online-boutique",
        {
            ("HorizontalPodAutoscaler", "frontend-hpa"): lambda b: b["spec"][
                "scaleTargetRef"
            ].update(name="frontnd")
        },
        extra=(_hpa("frontend"),),
    ),
    Case(
        "resource-quota-blocks",
        "resource-quota-blocks",
        "online-boutique",
        {("Deployment", "loadgenerator"): lambda b: ctr(b, "main").pop("resources")},
        base={
            ("Deployment", "loadgenerator"): lambda b: ctr(
                b, "frontend-check", "initContainers"
            ).update(resources={"requests": {"memory": "32Mi"}})
        },
        extra=(QUOTA,),
    ),
    # live symptoms whose params name the field
    Case(
        "bad-image",
        "pod-image-pull",
        "online-boutique",
        {("Deployment", "adservice"): lambda b: ctr(b, "server").update(image="adservice:v9.9.9")},
        pods=(("adservice", "server", PULL, False),),
    ),
    Case(
        "bad-image",
        "pod-crashloop",
        "hotel-reservation",
        {("Deployment", "geo"): lambda b: ctr(b, "hotel-reserv-geo").update(image="geo:broken")},
        pods=(("geo", "hotel-reserv-geo", CRASH, False),),
    ),
    Case(
        "wrong-command",
        "pod-crashloop",
        "hotel-reservation",
        {
            ("Deployment", "profile"): lambda b: ctr(b, "hotel-reserv-profile").update(
                command=["./geo"]
            )
        },
        pods=(("profile", "hotel-reserv-profile", CRASH, False),),
    ),
    Case(
        "env-missing",
        "pod-crashloop",
        "online-boutique",
        {
            ("Deployment", "frontend"): lambda b: ctr(b, "server")["env"].remove(
                env_var(b, "server", "CART_SERVICE_ADDR")
            )
        },
        pods=(("frontend", "server", CRASH, False),),
    ),
    Case(
        "liveness-probe-wrong",
        "pod-crashloop",
        "sock-shop",
        {
            ("Deployment", "catalogue"): lambda b: ctr(b, "catalogue")["livenessProbe"][
                "httpGet"
            ].update(path="/nope")
        },
        pods=(("catalogue", "catalogue", CRASH, False),),
    ),
    Case(
        "memory-limit-too-small",
        "pod-crashloop",
        "online-boutique",
        {
            ("Deployment", "cartservice"): lambda b: ctr(b, "server")["resources"]["limits"].update(
                memory="70Mi"
            )
        },
        pods=(("cartservice", "server", OOM, False),),
    ),
    Case(
        "init-container-hang",
        "pod-init-stuck",
        "online-boutique",
        {
            ("Deployment", "loadgenerator"): lambda b: env_var(
                b, "frontend-check", "FRONTEND_ADDR", "initContainers"
            ).update(value="frontend-v2:80")
        },
        pods=(("loadgenerator", "frontend-check", HANG, True),),
    ),
]


def _id(case: Case) -> str:
    return f"{case.playbook}<-{case.detector}@{case.app}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_bound_fix_restores_exactly_the_injected_fault(case: Case) -> None:
    good, bad = _state(case, faulted=False), _state(case, faulted=True)
    changed = {ref for ref in bad if bad[ref] != good[ref]}
    assert changed, "the fault changed nothing"
    result = run_detectors([REGISTRY.get(case.detector)], _snapshot(case, bad))
    assert not result.errors, result.errors
    routed = [f for f in result.findings if BOOKS[case.playbook].routes(f)]
    assert routed, f"{case.detector} found {[f.rule for f in result.findings]}"
    if not case.pods:  # live symptoms are built from pod states, not from the manifests
        before = run_detectors([REGISTRY.get(case.detector)], _snapshot(case, good)).findings
        assert not {f.fingerprint for f in before} & {f.fingerprint for f in routed}
    fixed = copy.deepcopy(bad)
    hit = False
    for finding in routed:
        assert case.playbook in finding.playbooks
        bound = bind(BOOKS[case.playbook], finding)
        assert bound.target in fixed, f"{bound.target} is not an object of the app"
        for path in bound.paths:
            hit |= get(bad[bound.target], path) != get(good[bound.target], path)
            restore(fixed[bound.target], good[bound.target], path)
        if case.fallback_known:
            for path, value in bound.fallback.items():
                original = get(good[bound.target], path)
                expected = DEFAULTS[path.rsplit(".", 1)[-1]] if original is MISSING else original
                assert value == expected, (path, value, expected)
    assert hit, "no bound path holds the injected value"
    assert fixed == good


def test_every_fix_playbook_and_each_of_its_detectors_has_a_case() -> None:
    covered = {(c.playbook, c.detector) for c in CASES}
    wanted = {(b.id, d) for b in BOOKS.values() if b.fix is not None for d in b.detectors}
    assert wanted - covered == set()
