"""The A-class faults of FAULTS.md that gitmedic can see, each on two real apps.

Each fault is injected as its own commit by the Edit API on top of the upstream
manifests; ``live`` adds the pods a cluster would show for faults only the live
state reveals. Apps: online-boutique and sock-shop (one file each),
hotel-reservation (a folder of files), astronomy-shop-otel-demo and social-network
where a fault needs what only they have: callers found through env addresses,
multi-label selectors, ConfigMaps (two objects of the otel demo).
"""

from __future__ import annotations

from tests.responder.support import (
    DELETE,
    POD,
    Fault,
    Touch,
    add,
    crashloop,
    fault,
    image_pull,
    ins,
    rm,
    set_,
)

B, S, H, OTEL = "online-boutique", "sock-shop", "hotel-reservation", "astronomy-shop-otel-demo"
N = "social-network"
SRV = f"{POD}containers[name=server]."
CAT = f"{POD}containers[name=catalogue]."
HGEO = f"{POD}containers[name=hotel-reserv-geo]."
HPROF = f"{POD}containers[name=hotel-reserv-profile]."


def _anti_affinity(app_label: str, value: str) -> dict[str, object]:
    term = {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {app_label: value}},
    }
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _deny_all(name: str, labels: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name},
        "spec": {"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress"]},
    }


def _quota(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name},
        "spec": {"hard": {"requests.memory": "8Gi", "limits.memory": "16Gi"}},
    }


def _sidecar(port: int) -> dict[str, object]:
    return {
        "name": "proxy",
        "image": "envoyproxy/envoy:v1.30.1",
        "ports": [{"containerPort": port}],
    }


_UNSAFE = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}
_AGGRESSIVE = {"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}

FAULTS: list[Fault] = [
    fault(
        "service-target-port",
        B,
        "Service",
        "cartservice",
        set_("spec.ports[name=grpc].targetPort", 9999),
    ),
    fault("service-target-port", S, "Service", "catalogue", set_("spec.ports[0].targetPort", 8081)),
    fault(
        "service-selector-mismatch", B, "Service", "frontend", ins("spec.selector.version", "v2")
    ),
    fault(
        "service-selector-mismatch",
        H,
        "Service",
        "geo",
        set_('spec.selector["io.kompose.service"]', "geo-v2"),
    ),
    fault(
        "service-selector-polluted",
        OTEL,
        "Service",
        "grafana",
        rm('spec.selector["app.kubernetes.io/name"]'),
    ),
    fault("service-selector-polluted", N, "Service", "compose-post-redis", rm("spec.selector.app")),
    fault("missing-service", B, "Service", "productcatalogservice", DELETE),
    fault("missing-service", OTEL, "Service", "currency", DELETE),
    fault("scaled-to-zero", B, "Deployment", "cartservice", ins("spec.replicas", 0, 0)),
    fault("scaled-to-zero", OTEL, "Deployment", "product-catalog", set_("spec.replicas", 0)),
    fault(
        "nonexistent-node",
        B,
        "Deployment",
        "checkoutservice",
        ins(f"{POD}nodeSelector", {"kubernetes.io/hostname": "extra-node"}),
        nodes=3,
    ),
    fault(
        "nonexistent-node",
        H,
        "Deployment",
        "geo",
        ins(f"{POD}nodeSelector", {"kubernetes.io/hostname": "extra-node"}),
        nodes=3,
    ),
    fault(
        "bad-image",
        B,
        "Deployment",
        "adservice",
        set_(
            f"{SRV}image",
            "us-central1-docker.pkg.dev/google-samples/microservices-demo/adservice:no-such-tag",
        ),
        live=image_pull("adservice", "server"),
    ),
    fault(
        "bad-image",
        H,
        "Deployment",
        "profile",
        set_(f"{HPROF}image", "deathstarbench/hotel-reservation:no-such-tag"),
        live=image_pull("profile", "hotel-reserv-profile"),
    ),
    fault(
        "wrong-command",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}command", ["/geo"]),
        live=crashloop("catalogue", "catalogue"),
    ),
    fault(
        "wrong-command",
        H,
        "Deployment",
        "profile",
        set_(f"{HPROF}command", ["geo"]),
        live=crashloop("profile", "hotel-reserv-profile"),
    ),
    fault(
        "env-wrong-port",
        B,
        "Deployment",
        "frontend",
        set_(f"{SRV}env[name=PRODUCT_CATALOG_SERVICE_ADDR].value", "productcatalogservice:3551"),
    ),
    fault(
        "env-wrong-port",
        B,
        "Deployment",
        "checkoutservice",
        set_(f"{SRV}env[name=CART_SERVICE_ADDR].value", "cartservice:7071"),
    ),
    fault(
        "env-missing",
        B,
        "Deployment",
        "frontend",
        rm(f"{SRV}env[name=CART_SERVICE_ADDR]"),
        live=crashloop("frontend", "server"),
    ),
    fault(
        "env-missing",
        S,
        "Deployment",
        "front-end",
        rm(f"{POD}containers[name=front-end].env[name=SESSION_REDIS]"),
        live=crashloop("front-end", "front-end"),
    ),
    fault(
        "env-shadowed",
        B,
        "Deployment",
        "checkoutservice",
        ins(f"{SRV}env[7]", {"name": "CART_SERVICE_ADDR", "value": "localhost:7070"}),
    ),
    fault(
        "env-shadowed",
        S,
        "Deployment",
        "carts",
        ins(f"{POD}containers[name=carts].env[1]", {"name": "JAVA_OPTS", "value": "-Xmx1m"}),
    ),
    fault(
        "liveness-probe-wrong",
        B,
        "Deployment",
        "frontend",
        set_(f"{SRV}livenessProbe.httpGet.path", "/no-such-path"),
        live=crashloop("frontend", "server"),
    ),
    fault(
        "liveness-probe-wrong",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}livenessProbe.httpGet.port", 8080),
    ),
    fault(
        "liveness-probe-aggressive",
        B,
        "Deployment",
        "productcatalogservice",
        ins(f"{SRV}livenessProbe.initialDelaySeconds", 0),
        ins(f"{SRV}livenessProbe.periodSeconds", 1),
        ins(f"{SRV}livenessProbe.failureThreshold", 1),
    ),
    fault(
        "liveness-probe-aggressive",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}livenessProbe.initialDelaySeconds", 0),
        set_(f"{CAT}livenessProbe.periodSeconds", 1),
        ins(f"{CAT}livenessProbe.failureThreshold", 1),
    ),
    fault(
        "readiness-probe-wrong",
        B,
        "Deployment",
        "cartservice",
        set_(f"{SRV}readinessProbe.grpc.port", 7071),
    ),
    fault(
        "readiness-probe-wrong",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}readinessProbe.httpGet.port", 8080),
    ),
    fault(
        "memory-limit-too-small",
        B,
        "Deployment",
        "cartservice",
        set_(f"{SRV}resources.limits.memory", "10Mi"),
    ),
    fault(
        "memory-limit-too-small",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}resources.limits.memory", "10Mi"),
    ),
    fault(
        "request-too-large",
        B,
        "Deployment",
        "adservice",
        set_(f"{SRV}resources.requests.memory", "64Gi"),
        nodes=3,
    ),
    fault(
        "request-too-large",
        S,
        "Deployment",
        "catalogue",
        set_(f"{CAT}resources.requests.memory", "64Gi"),
        nodes=3,
    ),
    fault("missing-configmap", OTEL, "ConfigMap", "grafana", DELETE),
    fault("missing-configmap", OTEL, "ConfigMap", "otel-collector", DELETE),
    fault("configmap-key-dropped", OTEL, "ConfigMap", "otel-collector", rm("data.relay")),
    fault("configmap-key-dropped", OTEL, "ConfigMap", "grafana", rm("data.plugins")),
    fault(
        "pvc-claim-broken",
        H,
        "Deployment",
        "mongodb-geo",
        set_(f"{POD}volumes[name=geo].persistentVolumeClaim.claimName", "geo-pvc-broken"),
    ),
    fault(
        "pvc-claim-broken",
        H,
        "Deployment",
        "mongodb-profile",
        set_(f"{POD}volumes[name=profile].persistentVolumeClaim.claimName", "profile-broken"),
    ),
    fault("rwo-pvc-shared", H, "Deployment", "mongodb-geo", set_("spec.replicas", 2)),
    fault("rwo-pvc-shared", H, "Deployment", "mongodb-rate", set_("spec.replicas", 3)),
    fault(
        "anti-affinity-deadlock",
        B,
        "Deployment",
        "checkoutservice",
        ins("spec.replicas", 4, 0),
        ins(f"{POD}affinity", _anti_affinity("app", "checkoutservice")),
        nodes=3,
    ),
    fault(
        "anti-affinity-deadlock",
        S,
        "Deployment",
        "catalogue",
        set_("spec.replicas", 4),
        ins(f"{POD}affinity", _anti_affinity("name", "catalogue")),
        nodes=3,
    ),
    fault(
        "sidecar-port-conflict",
        B,
        "Deployment",
        "cartservice",
        ins(f"{POD}containers[1]", _sidecar(7070)),
    ),
    fault(
        "sidecar-port-conflict",
        S,
        "Deployment",
        "catalogue",
        ins(f"{POD}containers[1]", _sidecar(80)),
    ),
    fault(
        "host-port-conflict",
        B,
        "Deployment",
        "frontend",
        ins("spec.replicas", 4, 0),
        ins(f"{SRV}ports[0].hostPort", 8080),
        nodes=3,
    ),
    fault(
        "host-port-conflict",
        S,
        "Deployment",
        "catalogue",
        set_("spec.replicas", 4),
        ins(f"{CAT}ports[0].hostPort", 80),
        nodes=3,
    ),
    fault(
        "rollout-strategy-unsafe",
        B,
        "Deployment",
        "cartservice",
        ins("spec.strategy", _UNSAFE),
        ins("spec.replicas", 2, 0),
    ),
    fault(
        "rollout-strategy-unsafe",
        H,
        "Deployment",
        "profile",
        set_("spec.strategy", _UNSAFE),
        set_("spec.replicas", 2),
    ),
    fault(
        "dns-policy-none",
        B,
        "Deployment",
        "adservice",
        ins(f"{POD}dnsPolicy", "None"),
        ins(f"{POD}dnsConfig", {"nameservers": ["8.8.8.8"]}),
    ),
    fault(
        "dns-policy-none",
        S,
        "Deployment",
        "orders",
        ins(f"{POD}dnsPolicy", "None"),
        ins(f"{POD}dnsConfig", {"nameservers": ["8.8.8.8"]}),
    ),
    fault(
        "network-policy-deny-all",
        B,
        "NetworkPolicy",
        "deny-cart",
        add(_deny_all("deny-cart", {"app": "cartservice"})),
    ),
    fault(
        "network-policy-deny-all",
        OTEL,
        "NetworkPolicy",
        "deny-cart",
        add(_deny_all("deny-cart", {"app.kubernetes.io/name": "cart"})),
    ),
    fault(
        "internal-traffic-policy-local",
        B,
        "Service",
        "cartservice",
        ins("spec.internalTrafficPolicy", "Local"),
    ),
    fault(
        "internal-traffic-policy-local",
        S,
        "Service",
        "catalogue",
        ins("spec.internalTrafficPolicy", "Local"),
    ),
    fault("resource-quota-blocks", S, "ResourceQuota", "mem", add(_quota("mem"))),
    fault("resource-quota-blocks", H, "ResourceQuota", "mem", add(_quota("mem"))),
]

# Faults the data cannot express, and why (documented, and checked to stay honest).
NOT_COVERED = {
    "cpu-limit-too-tight": "no detector sees it (healthy-looking pods); the LLM path's case",
    "init-container-hang": "needs an init container none of the apps has",
    "ingress-misroute": "none of the real apps declares an Ingress",
    "hpa-no-cpu-request": "none of the real apps declares an HPA (see the two-commit test)",
    "feature-flag": "no detector sees it; the LLM path's case",
}


def touches_of(f: Fault) -> tuple[Touch, ...]:
    return f.touches
