"""Real repository shapes through the real ``gitmedic detect`` (a subprocess).

Each manifest is a minimal file of a shape public repositories hold (kube-prometheus,
Istio's bookinfo, Argo Rollouts' examples, Helm charts with install hooks, the
Kubernetes guestbook's ReplicationControllers). A critical must mean certain
breakage: these exit 0 under ``--fail-on critical``, with the warning or info that
says what would make it certain. The real faults next to them stay critical (exit 1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {{name: {name}}}
spec:
  selector: {selector}
  ports: [{{port: 80}}]
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {labels}}}
  template:
    metadata: {{labels: {labels}}}
    spec: {{containers: [{{name: main, image: "{image}"}}]}}
"""


def detect(tmp_path: Path, *docs: str) -> tuple[int, list[dict[str, Any]]]:
    (tmp_path / "app.yaml").write_text("---\n".join(docs))
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(tmp_path), "--format", "json",
         "--fail-on", "critical"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == [], report["errors"]
    return proc.returncode, report["findings"]


def deployment(name: str, labels: str, image: str = "app:1", replicas: int = 1) -> str:
    return DEPLOYMENT.format(name=name, labels=labels, image=image, replicas=replicas)


def of(findings: list[dict[str, Any]], detector: str) -> list[tuple[str, str, str]]:
    return [
        (f["resource"]["name"], f["rule"], f["severity"])
        for f in findings
        if f["detector"] == detector
    ]


def summary(findings: list[dict[str, Any]], detector: str) -> str:
    return next(str(f["summary"]) for f in findings if f["detector"] == detector)


def test_replication_controller_pods_are_selected(tmp_path: Path) -> None:
    rc = """\
apiVersion: v1
kind: ReplicationController
metadata: {name: redis-master}
spec:
  replicas: 1
  selector: {name: redis-master}
  template:
    metadata: {labels: {name: redis-master}}
    spec: {containers: [{name: master, image: "redis:7"}]}
"""
    code, findings = detect(
        tmp_path, SERVICE.format(name="redis-master", selector="{name: redis-master}"), rc
    )
    assert of(findings, "service-selector-unmatched") == []
    assert code == 0


def test_argo_rollouts_pods_are_selected_and_its_workload_ref_pollutes_nothing(
    tmp_path: Path,
) -> None:
    rollout = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: rollout-ref-deployment}
spec:
  replicas: 5
  selector: {matchLabels: {app: rollout-ref-deployment}}
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: rollout-ref-deployment}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {duration: 10s}}]}}
"""
    code, findings = detect(
        tmp_path,
        SERVICE.format(name="rollout-ref", selector="{app: rollout-ref-deployment}"),
        rollout,
        deployment("rollout-ref-deployment", "{app: rollout-ref-deployment}", replicas=0),
    )
    assert of(findings, "service-selector-unmatched") == []
    assert of(findings, "service-selector-polluted") == []
    assert code == 0


def test_a_prometheus_resource_may_own_the_pods_a_service_selects(tmp_path: Path) -> None:
    prometheus = """\
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s}
spec: {replicas: 2}
"""
    code, findings = detect(
        tmp_path,
        SERVICE.format(name="prometheus-k8s", selector="{app.kubernetes.io/name: prometheus}"),
        prometheus,
    )
    assert of(findings, "service-selector-unmatched") == [
        ("prometheus-k8s", "service-selector-unmatched", "warning")
    ]
    assert "Prometheus k8s may own pods" in summary(findings, "service-selector-unmatched")
    assert code == 0


def test_a_service_per_statefulset_replica_selects_its_pod(tmp_path: Path) -> None:
    statefulset = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 2
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27"}]}
"""
    code, findings = detect(
        tmp_path,
        SERVICE.format(name="web-0", selector="{statefulset.kubernetes.io/pod-name: web-0}"),
        SERVICE.format(name="web-1", selector="{statefulset.kubernetes.io/pod-name: web-1}"),
        statefulset,
    )
    assert of(findings, "service-selector-unmatched") == []
    assert code == 0


def test_a_service_for_a_cluster_add_on_is_a_warning_in_desired_state(tmp_path: Path) -> None:
    code, findings = detect(
        tmp_path,
        SERVICE.format(name="node-exporter", selector="{app.kubernetes.io/name: node-exporter}"),
    )
    assert of(findings, "service-selector-unmatched") == [
        ("node-exporter", "service-selector-unmatched", "warning")
    ]
    assert "outside the repository" in summary(findings, "service-selector-unmatched")
    assert code == 0


def test_versions_of_one_app_behind_one_service_are_no_pollution(tmp_path: Path) -> None:
    versions = [
        deployment(f"reviews-v{i}", f"{{app: reviews, version: v{i}}}", f"reviews-v{i}:1.20")
        for i in (1, 2, 3)
    ]
    code, findings = detect(
        tmp_path, SERVICE.format(name="reviews", selector="{app: reviews}"), *versions
    )
    assert of(findings, "service-selector-polluted") == [
        ("reviews", "service-selector-polluted", "info")
    ]
    assert code == 0


def test_a_claim_template_replaces_the_pod_volume_of_its_name(tmp_path: Path) -> None:
    statefulset = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
    code, findings = detect(tmp_path, statefulset)
    assert of(findings, "missing-reference") == []
    assert code == 0


HOOK_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: certgen
  annotations: {"helm.sh/hook": pre-install}
spec:
  template:
    spec:
      serviceAccountName: certgen
      restartPolicy: OnFailure
      containers: [{name: certgen, image: "kube-webhook-certgen:v1.4"}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: certgen}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: certgen}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: certgen}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: certgen}
subjects: [{kind: ServiceAccount, name: certgen}]
"""
CONSUMER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: controller}
spec:
  selector: {matchLabels: {app: controller}}
  template:
    metadata: {labels: {app: controller}}
    spec:
      containers: [{name: controller, image: "controller:1"}]
      volumes: [{name: ca, configMap: {name: controller-ca}}]
"""


def test_a_configmap_a_hook_job_may_create_is_a_warning_naming_it(tmp_path: Path) -> None:
    code, findings = detect(tmp_path, CONSUMER, HOOK_JOB)
    assert of(findings, "missing-reference") == [("controller", "configmap-missing", "warning")]
    assert "Job/default/certgen may create it" in summary(findings, "missing-reference")
    assert code == 0


def test_a_configmap_nobody_could_create_stays_critical(tmp_path: Path) -> None:
    code, findings = detect(tmp_path, CONSUMER)
    assert of(findings, "missing-reference") == [("controller", "configmap-missing", "critical")]
    assert code == 1


def test_the_real_faults_stay_critical(tmp_path: Path) -> None:
    code, findings = detect(
        tmp_path,
        # a selector drifted from its workload (tier=backendx)
        SERVICE.format(name="cart", selector="{app: cart, tier: backendx}"),
        deployment("cart", "{app: cart, tier: backend}", "cart:1"),
        # one selector over two different programs
        SERVICE.format(name="shop", selector="{part-of: shop}"),
        deployment("search", "{app: search, part-of: shop}", "search:2"),
        deployment("basket", "{app: basket, part-of: shop}", "basket:3"),
    )
    assert of(findings, "service-selector-unmatched") == [
        ("cart", "service-selector-unmatched", "critical")
    ]
    assert of(findings, "service-selector-polluted") == [
        ("shop", "service-selector-polluted", "critical")
    ]
    assert code == 1


def test_an_ingress_to_a_service_an_operator_creates_is_a_warning(tmp_path: Path) -> None:
    ingress = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: alertmanager}
spec:
  defaultBackend: {service: {name: alertmanager-operated, port: {name: web}}}
---
apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: main}
spec: {replicas: 3}
"""
    code, findings = detect(tmp_path, ingress)
    assert of(findings, "ingress-backend") == [("alertmanager", "service-missing", "warning")]
    assert "Alertmanager main may create it" in summary(findings, "ingress-backend")
    assert code == 0


def test_a_workload_keda_scales_from_zero_is_a_warning(tmp_path: Path) -> None:
    caller = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - {name: api, image: "api:1", env: [{name: WORKER_URL, value: "http://worker:80"}]}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 0
  triggers: [{type: cron, metadata: {timezone: UTC, start: 0 8 * * *, end: 0 18 * * *,
    desiredReplicas: "2"}}]
"""
    code, findings = detect(
        tmp_path,
        SERVICE.format(name="worker", selector="{app: worker}"),
        deployment("worker", "{app: worker}", "worker:1", replicas=0),
        caller,
    )
    assert of(findings, "scaled-to-zero") == [("worker", "scaled-to-zero", "warning")]
    assert code == 0


def test_one_host_port_on_two_deployments_with_unknown_nodes_is_a_warning(
    tmp_path: Path,
) -> None:
    def host_port(name: str) -> str:
        return deployment(name, f"{{app: {name}}}", f"{name}:1").replace(
            f'image: "{name}:1"',
            f'image: "{name}:1", ports: [{{containerPort: 8080, hostPort: 8080}}]',
        )

    code, findings = detect(tmp_path, host_port("auth"), host_port("webui"))
    assert of(findings, "host-port-conflict") == [
        ("auth", "host-port-shared", "warning"),
        ("webui", "host-port-shared", "warning"),
    ]
    assert code == 0
