"""What the real API server's RBAC says the chart's identity may do, asked through the
authorization API itself (what ``kubectl auth can-i`` does underneath): the bot's
own SelfSubjectAccessReviews, and an admin's SubjectAccessReviews about it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.realkube.bot_identity import chart_rules, install_bot
from tests.realkube.conftest import REALKUBE
from tests.realkube.tier import Tier

pytestmark = REALKUBE
READS = ("get", "list", "watch")
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def authorization(kubeconfig: Path) -> Any:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
    return client.AuthorizationV1Api(api_client)


def attributes(verb: str, group: str, plural: str, namespace: str) -> dict[str, str]:
    resource, _, subresource = plural.partition("/")
    found = {"verb": verb, "group": group, "resource": resource, "namespace": namespace}
    return {**found, "subresource": subresource} if subresource else found


def self_allowed(api: Any, verb: str, group: str, plural: str, namespace: str) -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes(verb, group, plural, namespace)},
    }
    return bool(api.create_self_subject_access_review(review).status.allowed)


def kinds(rules: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted({(g, p) for r in rules for g in r["apiGroups"] for p in r["resources"]})


def test_the_bot_is_allowed_exactly_get_list_and_watch_on_the_kinds_it_reads(
    tier: Tier, namespace: str, tmp_path: Path
) -> None:
    bot = authorization(install_bot(tier.plane, namespace, tmp_path, read_secrets=False))
    readable = kinds(chart_rules(read_secrets=False))
    assert ("", "pods") in readable and ("apps", "deployments") in readable

    denied = [
        (verb, group, plural)
        for group, plural in readable
        for verb in READS
        if not self_allowed(bot, verb, group, plural, namespace)
    ]
    granted = [
        (verb, group, plural)
        for group, plural in [*readable, ("", "secrets"), ("", "pods/exec"), ("", "pods/log")]
        for verb in WRITES
        if self_allowed(bot, verb, group, plural, namespace)
    ]

    assert denied == [], "every kind the detectors read is readable"
    assert granted == [], "nothing is writable"
    assert not self_allowed(bot, "get", "", "secrets", namespace), "no Secrets by default"


def test_an_admin_sees_the_same_about_the_bot_and_secrets_only_with_read_secrets(
    tier: Tier, namespace: str, tmp_path: Path
) -> None:
    install_bot(tier.plane, namespace, tmp_path, read_secrets=True)
    admin = authorization(tier.plane.kubeconfig)
    account = f"system:serviceaccount:{namespace}:gm-{namespace}-gitmedic"

    def allowed(verb: str, plural: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": account,
                "resourceAttributes": attributes(verb, "", plural, namespace),
            },
        }
        return bool(admin.create_subject_access_review(review).status.allowed)

    assert [v for v in READS if allowed(v, "secrets")] == list(READS)
    assert [v for v in WRITES if allowed(v, "secrets")] == []
    assert not allowed("create", "pods/exec")
    assert not allowed("get", "nonexistentkinds"), "the review is not vacuous"
