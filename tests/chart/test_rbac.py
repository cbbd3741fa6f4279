"""The chart's RBAC: read-only, exactly the kinds the detectors read, Secrets only on request;
with ``shards.enabled`` one Role that writes, on Leases in the release's namespace only."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from gitmedic.bot.cli import rbac
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.registry import Registry
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.live import LIST_CALLS
from tests.chart.conftest import CHART, VALUE_SETS, Helm, one, values_file

RULES_FILE = CHART / "files" / "clusterrole-rules.yaml"


def test_the_rules_file_is_what_the_detector_registry_generates() -> None:
    assert RULES_FILE.read_text() == rbac.render(), (
        "charts/gitmedic/files/clusterrole-rules.yaml is out of date: run `make chart-rbac`"
    )


def test_the_rules_cover_exactly_the_kinds_detectors_read_live() -> None:
    generated = yaml.safe_load(RULES_FILE.read_text())
    granted = {
        (group, resource)
        for rule in generated["rules"] + generated["clusterRules"] + generated["secretRules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    read = set().union(*(d.spec.kinds for d in builtin_registry())) - set(rbac.NOT_LISTED_LIVE)
    expected = {
        ("" if c.core else c.api_version.split("/")[0], c.plural)
        for c in LIST_CALLS
        if c.kind in read
    }
    assert granted == expected
    assert generated["secretRules"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}
    ]


def test_a_detector_reading_an_unlisted_kind_is_named() -> None:
    (base,) = [d for d in builtin_registry() if d.id == "scaled-to-zero"]
    spec = dataclasses.replace(base.spec, kinds=base.spec.kinds | {"PodDisruptionBudget"})
    registry = Registry(
        [*(d for d in builtin_registry() if d.id != base.id), Detector(spec, base.detect)]
    )
    with pytest.raises(rbac.RbacError, match=r"PodDisruptionBudget \(read by scaled-to-zero\)"):
        rbac.render(registry)


def test_a_listed_kind_no_detector_reads_is_refused() -> None:
    (pods,) = [c for c in LIST_CALLS if c.kind == "Pod"]
    extra = dataclasses.replace(pods, kind="PodTemplate", plural="podtemplates")
    with pytest.raises(rbac.RbacError, match="lists kinds no detector reads: PodTemplate"):
        rbac.read_calls(builtin_registry(), [*LIST_CALLS, extra])


LEASE_RULE = {
    "apiGroups": ["coordination.k8s.io"],
    "resources": ["leases"],
    "verbs": ["get", "list", "watch", "create", "update"],
}


@pytest.mark.integration
@pytest.mark.parametrize("value_set", VALUE_SETS)
@pytest.mark.parametrize("shards", ["false", "true"])
def test_every_role_but_the_lease_role_is_read_only(
    helm: Helm, value_set: str, shards: str
) -> None:
    rendered = helm.render(value_set, "--set", f"shards.enabled={shards}")
    roles = [o for o in rendered if o["kind"] in ("Role", "ClusterRole")]
    writers = [
        r
        for r in roles
        if any(set(rule["verbs"]) - {"get", "list", "watch"} for rule in r["rules"])
    ]
    assert [w["metadata"]["name"] for w in writers] == (
        ["gitmedic-leases"] if shards == "true" else []
    )
    for role in writers:  # the one write: Leases, in the bot's own namespace
        assert role["kind"] == "Role" and role["metadata"]["namespace"] == "gitmedic"
        assert role["rules"] == [LEASE_RULE]


@pytest.mark.integration
def test_shards_bind_the_lease_role_and_tell_the_pod_its_namespace(helm: Helm) -> None:
    rendered = helm.render(
        "app-argocd-cr", "--set", "shards.enabled=true", "--set", "shards.leaseSeconds=30"
    )
    leases = [o for o in rendered if o["metadata"]["name"] == "gitmedic-leases"]
    binding = one(leases, "RoleBinding")
    assert binding["roleRef"]["name"] == "gitmedic-leases"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "gitmedic", "namespace": "gitmedic"}
    ]
    (container,) = one(rendered, "Deployment")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GITMEDIC_SHARD_LEASES"] == "gitmedic"
    assert env["GITMEDIC_SHARD_LEASE_SECONDS"] == "30"
    assert env["GITMEDIC_SHARD_GROUP"] == "gitmedic"
    plain = one(helm.render("app-argocd-cr"), "Deployment")["spec"]["template"]["spec"]
    assert not any(e["name"].startswith("GITMEDIC_SHARD") for e in plain["containers"][0]["env"])


@pytest.mark.integration
def test_a_lease_duration_too_short_to_renew_is_refused_by_the_schema(helm: Helm) -> None:
    done = helm.template("--values", values_file("app-argocd-cr"), "--set", "shards.leaseSeconds=2")
    assert done.returncode != 0 and "leaseSeconds" in done.stderr


@pytest.mark.integration
def test_secrets_are_granted_only_when_asked(helm: Helm) -> None:
    def resources(value_set: str) -> set[str]:
        role = one(helm.render(value_set), "ClusterRole")
        return {r for rule in role["rules"] for r in rule["resources"]}

    assert "secrets" not in resources("app-argocd-cr")
    assert "secrets" in resources("token-flux-secrets")
    generated = yaml.safe_load(RULES_FILE.read_text())
    role = one(helm.render("app-argocd-cr"), "ClusterRole")
    assert role["rules"] == generated["rules"] + generated["clusterRules"]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("value_set", "namespace", "group", "plural"),
    [
        ("app-argocd-cr", "argocd", "argoproj.io", "applications"),
        ("token-flux-secrets", "flux-system", "kustomize.toolkit.fluxcd.io", "kustomizations"),
    ],
)
def test_the_engine_role_reads_the_one_object_of_the_app(
    helm: Helm, value_set: str, namespace: str, group: str, plural: str
) -> None:
    objs = [o for o in helm.render(value_set) if o["metadata"]["name"].endswith("-engine")]
    role, binding = one(objs, "Role"), one(objs, "RoleBinding")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == namespace
    assert role["rules"] == [
        {
            "apiGroups": [group],
            "resources": [plural],
            "resourceNames": ["shop"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "gitmedic", "namespace": "gitmedic"}
    ]


@pytest.mark.integration
def test_the_argocd_rest_api_needs_no_role(helm: Helm) -> None:
    assert not [o for o in helm.render("argocd-rest-llm") if o["kind"] == "Role"]
