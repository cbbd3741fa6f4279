"""Least privilege: egress closed but for DNS and the API server; a namespaced RBAC mode."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.chart.conftest import CHART, Helm, one

pytestmark = pytest.mark.integration

INSTALL = ("--set", "github.repository=acme/shop", "--set", "github.appId=1")
GENERATED = yaml.safe_load((CHART / "files" / "clusterrole-rules.yaml").read_text())


def _rendered(helm: Helm, *args: str) -> list[dict[str, Any]]:
    result = helm.template(*INSTALL, "--set", "engine.kind=none", *args)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_egress_defaults_to_dns_and_the_api_server_only(helm: Helm) -> None:
    egress = one(_rendered(helm), "NetworkPolicy")["spec"]["egress"]
    dns, api = egress
    assert dns["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    assert {p["port"] for p in dns["ports"]} == {53}
    # No cluster to look the API server up in `helm template`: its ports, nothing else.
    assert api == {"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}
    assert {} not in egress, "an empty rule would allow egress anywhere"


def test_forge_argocd_and_the_model_are_opened_only_by_values(helm: Helm) -> None:
    egress = one(helm.render("argocd-rest-llm"), "NetworkPolicy")["spec"]["egress"]
    cidrs = {
        peer["ipBlock"]["cidr"]
        for rule in egress
        for peer in rule.get("to", [])
        if "ipBlock" in peer
    }
    assert cidrs == {"140.82.112.0/20", "192.30.252.0/22", "160.79.104.0/23"}
    assert len(egress) == 5  # dns, the API server, forge, argocd, llm


def test_a_configured_api_server_address_replaces_the_any_address_fallback(helm: Helm) -> None:
    egress = one(helm.render("namespaced-ingress"), "NetworkPolicy")["spec"]["egress"]
    assert egress[1] == {
        "ports": [{"port": 443, "protocol": "TCP"}],
        "to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}],
    }


def test_namespaced_mode_grants_roles_in_the_listed_namespaces_and_nothing_cluster_wide(
    helm: Helm,
) -> None:
    objs = helm.render("namespaced-ingress")
    assert not [o for o in objs if o["kind"].startswith("Cluster")]
    roles = [o for o in objs if o["kind"] == "Role"]
    bindings = [o for o in objs if o["kind"] == "RoleBinding"]
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["shop", "shop-staging"]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["shop", "shop-staging"]
    for role in roles:
        assert role["rules"] == GENERATED["rules"]
        granted = {r for rule in role["rules"] for r in rule["resources"]}
        assert "nodes" not in granted and "secrets" not in granted
    assert bindings[0]["subjects"] == [
        {"kind": "ServiceAccount", "name": "gitmedic", "namespace": "gitmedic"}
    ]


def test_namespaced_mode_without_namespaces_is_refused(helm: Helm) -> None:
    result = helm.template(*INSTALL, "--set", "engine.kind=none", "--set", "rbac.scope=namespaces")
    assert result.returncode == 1
    assert "rbac.scope namespaces needs rbac.namespaces" in result.stderr


def test_the_ingress_routes_the_webhook_path_only(helm: Helm) -> None:
    ingress = one(helm.render("namespaced-ingress"), "Ingress")
    (rule,) = ingress["spec"]["rules"]
    assert rule["host"] == "gitmedic.example.com"
    assert [(p["path"], p["pathType"]) for p in rule["http"]["paths"]] == [
        ("/webhooks/github", "Exact")
    ]
    assert ingress["spec"]["tls"] == [
        {"hosts": ["gitmedic.example.com"], "secretName": "gitmedic-tls"}
    ]
    assert ingress["spec"]["ingressClassName"] == "nginx"


def test_extra_env_volumes_and_priority_reach_the_pod(helm: Helm) -> None:
    pod = one(helm.render("namespaced-ingress"), "Deployment")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["HTTPS_PROXY"] == "http://proxy.internal:3128"
    assert {"name": "ca", "mountPath": "/etc/gitmedic/ca", "readOnly": True} in container[
        "volumeMounts"
    ]
    assert {"name": "ca", "configMap": {"name": "corporate-ca"}} in pod["volumes"]
    assert pod["priorityClassName"] == "platform-critical"


def test_an_extra_env_without_a_name_is_refused_by_the_schema(helm: Helm) -> None:
    result = helm.template(*INSTALL, "--set", "engine.kind=none", "--set", "extraEnv[0].value=x")
    assert result.returncode == 1
    assert "extraEnv/0" in result.stderr


def test_notifications_and_the_liveness_allowance_reach_the_pod(helm: Helm) -> None:
    pod = one(helm.render("token-flux-secrets"), "Deployment")["spec"]["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["GITMEDIC_NOTIFY_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": "chat-hooks", "key": "slack"}
    }
    assert env["GITMEDIC_HEALTH_STALL_INTERVALS"]["value"] == "5"
    default = one(helm.render("app-argocd-cr"), "Deployment")["spec"]["template"]["spec"]
    names = {e["name"] for e in default["containers"][0]["env"]}
    assert "GITMEDIC_NOTIFY_URL" not in names  # no Secret named: not set
