"""What the cluster's own controllers make, which no manifest declares, so the sim never
invents a fault from its absence: istiod's CA in the mesh's namespaces, Flagger's Services
for a Canary, an ingress controller's address for every Ingress, and the replicas an HPA
(or the API's default) writes into a Deployment."""

from __future__ import annotations

from typing import Any

import yaml

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.reconciler.manifests.parse import parse_text
from gitmedic.sim.runtime import SimState
from tests.sim.helpers import sim_for

NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n"


def deployment(name: str, *, annotations: str = "{}", volumes: str = "[]", extra: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: prod}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {annotations}}}
    spec:
      containers:
        - name: {name}
          image: ghcr.io/stefanprodan/podinfo:6.1.0
          ports: [{{containerPort: 9898}}]
          resources: {{requests: {{cpu: 100m}}}}
{extra}      volumes: {volumes}
"""


MESH_CA = "[{name: ca, configMap: {name: istio-ca-root-cert}}]"
INJECTED = '{sidecar.istio.io/status: \'{"containers":["istio-proxy"]}\'}'


def snapshot(*texts: str) -> Snapshot:
    objs = [_obj(p.body) for text in texts for p in parse_text(text, "m.yaml").objects]
    return Snapshot(objs, mode=Mode.DESIRED, revision="rev-1")


def _obj(body: dict[str, Any]) -> Obj:
    meta = body.get("metadata") or {}
    ref = Resource(body["kind"], meta.get("namespace", ""), meta["name"], body["apiVersion"])
    return Obj(ref, body)


def observed(*texts: str, seconds: float = 300) -> SimState:
    return sim_for(snapshot(*texts)).run(seconds)


def ready(state: SimState, name: str) -> int:
    body = next(
        o
        for o in state.observed.objects
        if o["kind"] == "Deployment" and o["metadata"]["name"] == name
    )
    return int(body.get("status", {}).get("readyReplicas", 0))


def rules(state: SimState) -> set[str]:
    found = run_detectors(builtin_registry(), state.observed.snapshot).findings
    return {f"{f.detector}/{f.rule}" for f in found}


def test_a_pod_with_istios_sidecar_mounts_the_ca_istiod_publishes() -> None:
    state = observed(NAMESPACE, deployment("backend", annotations=INJECTED, volumes=MESH_CA))

    assert ready(state, "backend") == 1
    assert "missing-reference/configmap-missing" not in rules(state)
    names = {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in state.observed.objects
        if o["kind"] == "ConfigMap"
    }
    assert ("prod", "istio-ca-root-cert") in names


def test_outside_a_mesh_the_istio_ca_is_missing_and_the_pod_never_starts() -> None:
    state = observed(NAMESPACE, deployment("backend", volumes=MESH_CA))

    assert ready(state, "backend") == 0
    assert "missing-reference/configmap-missing" in rules(state)


def test_a_namespace_labelled_for_injection_is_in_the_mesh() -> None:
    labelled = NAMESPACE.replace("{name: prod}", "{name: prod, labels: {istio-injection: enabled}}")

    state = observed(labelled, deployment("backend", volumes=MESH_CA))

    assert ready(state, "backend") == 1


CANARY = """\
apiVersion: flagger.app/v1beta1
kind: Canary
metadata: {name: backend, namespace: prod}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: backend}
  service: {port: 9898}
"""
CALLER_ENV = "          env: [{name: BACKEND_URL, value: 'backend:9898'}]\n"


def test_a_canary_s_services_resolve_to_its_target() -> None:
    caller = deployment("frontend").replace(
        "          resources:", CALLER_ENV + "          resources:"
    )

    state = observed(NAMESPACE, deployment("backend"), caller, CANARY)

    services = {
        o["metadata"]["name"]: o["spec"]["selector"]
        for o in state.observed.objects
        if o["kind"] == "Service"
    }
    assert services == {
        "backend": {"app": "backend"},
        "backend-primary": {"app": "backend"},
        "backend-canary": {"app": "backend"},
    }
    assert "env-service-address/service-missing" not in rules(state)


def test_without_flagger_s_canary_the_caller_s_service_is_missing() -> None:
    caller = deployment("frontend").replace(
        "          resources:", CALLER_ENV + "          resources:"
    )

    state = observed(NAMESPACE, deployment("backend"), caller)

    assert "env-service-address/service-missing" in rules(state)


INGRESS = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: prod}
spec:
  rules:
    - http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: backend, port: {number: 9898}}}}
"""


def test_an_ingress_gets_an_address_so_the_app_is_healthy() -> None:
    service = (
        "apiVersion: v1\nkind: Service\nmetadata: {name: backend, namespace: prod}\n"
        "spec: {selector: {app: backend}, ports: [{port: 9898}]}\n"
    )

    state = observed(NAMESPACE, deployment("backend"), service, INGRESS)

    ingress = next(o for o in state.observed.objects if o["kind"] == "Ingress")
    assert ingress["status"]["loadBalancer"]["ingress"][0]["ip"]
    assert state.application["status"]["health"]["status"] == "Healthy"


def test_a_deployment_without_replicas_shows_the_api_default_and_what_an_hpa_sets() -> None:
    hpa = yaml.safe_dump(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "backend", "namespace": "prod"},
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "backend",
                },
                "minReplicas": 3,
                "maxReplicas": 3,
            },
        }
    )

    alone = observed(NAMESPACE, deployment("backend"))
    scaled = observed(NAMESPACE, deployment("backend"), hpa)

    def spec_replicas(state: SimState) -> int:
        return next(
            o["spec"]["replicas"] for o in state.observed.objects if o["kind"] == "Deployment"
        )

    assert spec_replicas(alone) == 1
    assert (spec_replicas(scaled), ready(scaled, "backend")) == (3, 3)
    assert not [
        a for a in scaled.alerts if a["labels"]["alertname"] == "KubeDeploymentReplicasMismatch"
    ]


RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: backend, namespace: prod}
spec: {chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}}
"""


def test_a_helm_release_the_sim_applied_reads_reconciled_so_the_app_is_healthy() -> None:
    state = observed(NAMESPACE, deployment("backend"), RELEASE)

    release = next(o for o in state.observed.objects if o["kind"] == "HelmRelease")
    conditions = {c["type"]: c["status"] for c in release["status"]["conditions"]}
    assert conditions == {"Ready": "True", "Released": "True"}
    assert state.application["status"]["health"]["status"] == "Healthy"
