"""What the chart deploys: one restricted pod running `gitmedic serve`, probes, state, secrets.

The rendered chart is also checked by the tools a platform team would point at
it: gitmedic's own detectors find nothing, and kube-score finds nothing beyond
the exceptions the objects carry, each with its reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.chart.conftest import VALUE_SETS, Helm, one
from tests.support.tools import tool_path

pytestmark = pytest.mark.integration


def _container(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (container,) = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return container


def test_one_replica_recreated_running_serve_with_probes(helm: Helm) -> None:
    objs = helm.render("app-argocd-cr")
    spec = one(objs, "Deployment")["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "Recreate"}
    container = _container(objs)
    assert "command" not in container and "args" not in container  # the image's `gitmedic serve`
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert set(container["resources"]) == {"requests", "limits"}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GITMEDIC_FORGE"] == "github" and env["GITMEDIC_CLUSTER"] == "kube"
    assert env["GITMEDIC_STATE_DIR"] == "/var/lib/gitmedic"
    assert env["GITHUB_REPOSITORY"] == "acme/shop"


def test_replicas_share_the_postgresql_journal_under_a_disruption_budget(helm: Helm) -> None:
    objs = helm.render("replicas-postgres")
    deployment = one(objs, "Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 3
    assert spec["strategy"]["type"] == "RollingUpdate"
    assert "kube-score/ignore" not in deployment["metadata"].get("annotations", {})
    env = {e["name"]: e for e in _container(objs)["env"]}
    assert env["GITMEDIC_JOURNAL_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": "gitmedic-journal", "key": "url"}
    }
    volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
    assert volumes["state"] == {"name": "state", "emptyDir": {}}, "no RWO claim shared by pods"
    assert not [o for o in objs if o["kind"] == "PersistentVolumeClaim"]
    budget = one(objs, "PodDisruptionBudget")["spec"]
    assert budget["maxUnavailable"] == 1
    assert budget["selector"]["matchLabels"] == spec["selector"]["matchLabels"]
    spread = spec["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = spread["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    one_replica = helm.render("app-argocd-cr")
    assert "GITMEDIC_JOURNAL_URL" not in {e["name"] for e in _container(one_replica)["env"]}
    assert not [o for o in one_replica if o["kind"] == "PodDisruptionBudget"]


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_the_pod_meets_the_restricted_pod_security_standard(helm: Helm, value_set: str) -> None:
    objs = helm.render(value_set)
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    context = _container(objs)["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert isinstance(context["runAsUser"], int) and context["runAsUser"] > 10000
    assert not any("hostPath" in v for v in pod["volumes"])


def test_secrets_are_references_to_existing_secrets_only(helm: Helm) -> None:
    objs = helm.render("argocd-rest-llm")
    assert not [o for o in objs if o["kind"] == "Secret"]
    refs = {
        e["name"]: e["valueFrom"]["secretKeyRef"]
        for e in _container(objs)["env"]
        if "valueFrom" in e
    }
    assert refs == {
        "GITHUB_APP_PRIVATE_KEY": {"name": "gitmedic", "key": "github-app-private-key"},
        "GITMEDIC_WEBHOOK_SECRET": {"name": "gitmedic", "key": "webhook-secret"},
        "ARGOCD_TOKEN": {"name": "argocd-readonly", "key": "token"},
        "ANTHROPIC_API_KEY": {"name": "llm", "key": "api-key"},
    }


def test_the_state_directory_is_a_claim_unless_disabled(helm: Helm) -> None:
    def state(value_set: str) -> dict[str, Any]:
        volumes = one(helm.render(value_set), "Deployment")["spec"]["template"]["spec"]["volumes"]
        (found,) = [v for v in volumes if v["name"] == "state"]
        return found

    assert state("app-argocd-cr")["persistentVolumeClaim"] == {"claimName": "gitmedic-state"}
    assert state("token-flux-secrets")["persistentVolumeClaim"] == {"claimName": "gitmedic-state"}
    assert state("argocd-rest-llm") == {"name": "state", "emptyDir": {}}
    claim = one(helm.render("app-argocd-cr"), "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_the_service_monitor_scrapes_metrics(helm: Helm) -> None:
    monitor = one(helm.render("token-flux-secrets"), "ServiceMonitor")
    assert monitor["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]
    assert monitor["metadata"]["labels"]["release"] == "prometheus"


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_gitmedic_detect_finds_nothing_in_the_rendered_chart(
    helm: Helm, value_set: str, tmp_path: Path
) -> None:
    objs = helm.render(value_set)
    # The Secrets the pod references exist before the install (README: "Helm chart").
    keys: dict[str, dict[str, str]] = {}
    for e in _container(objs)["env"]:
        if "valueFrom" in e:
            ref = e["valueFrom"]["secretKeyRef"]
            keys.setdefault(ref["name"], {})[ref["key"]] = "x"
    secrets = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "stringData": data,
            "metadata": {"name": name, "namespace": "gitmedic"},
        }
        for name, data in keys.items()
    ]
    # persistence.existingClaim: the claim exists before the install; else the chart has it
    claims = [_claim("gitmedic-state")] if value_set == "token-flux-secrets" else []
    # extraVolumes: the CA bundle ConfigMap exists before the install too
    bundles = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "corporate-ca", "namespace": "gitmedic"},
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----"},
        }
    ] * (value_set == "namespaced-ingress")
    manifests = tmp_path / "rendered.yaml"
    manifests.write_text(
        "---\n".join(json.dumps(o) + "\n" for o in [*objs, *secrets, *claims, *bundles])
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "detect",
            str(manifests),
            "--format",
            "json",
            "--fail-on",
            "info",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(result.stdout)
    # The one thing said is that a CRD's kind (the ServiceMonitor) has no bundled schema.
    unknown = [f for f in report["findings"] if f["rule"] == "schema-unknown-kind"]
    assert all(f["resource"]["kind"] == "ServiceMonitor" for f in unknown)
    assert {**report, "findings": [f for f in report["findings"] if f not in unknown]} == {
        "findings": [],
        "errors": [],
    }
    assert result.returncode == (1 if unknown else 0), result.stderr


def _claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "gitmedic"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_kube_score_finds_nothing_but_the_annotated_exceptions(
    helm: Helm, value_set: str, tmp_path: Path
) -> None:
    objs = helm.render(value_set)
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("---\n".join(json.dumps(o) + "\n" for o in objs))
    result = subprocess.run(
        [tool_path("kube-score"), "score", "--output-format", "ci", str(rendered)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for obj in objs:
        annotations = obj["metadata"].get("annotations", {})
        ignored = [c for c in annotations.get("kube-score/ignore", "").split(",") if c]
        reason = annotations.get("gitmedic/kube-score-ignore-reason", "")
        for check in ignored:
            assert check in reason.split(":")[0], f"{obj['kind']}: {check} has no reason"
