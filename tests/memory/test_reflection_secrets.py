"""Secrets planted in the snapshots never reach memory or the PR."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

from gitmedic.bot.memory.reflection import reflect
from gitmedic.detectors import Resource, Snapshot
from gitmedic.reconciler.manifests.edit import Edit, Op
from tests.memory.scenario import (
    MANIFESTS,
    NAMESPACE,
    healthy,
    incident,
    manifest_repo,
    plus,
    with_value,
)

SECRET_DATA = "hunter2-planted-db-password"
ENV_KEY = "sk_live_plantedStripeKey123456"
CONFIG_PASSWORD = "planted-config-password-77"
URL_PASSWORD = "urlpassw0rd-planted"
PLANTED = (SECRET_DATA, ENV_KEY, CONFIG_PASSWORD, URL_PASSWORD)
ENV = [
    {"name": "STRIPE_API_KEY", "value": ENV_KEY},
    {"name": "PAYMENTS_URL", "value": f"https://pay:{URL_PASSWORD}@payments.example/v1"},
]
CONTAINERS = ("spec", "template", "spec", "containers")


def secret() -> dict[str, object]:
    encoded = base64.b64encode(SECRET_DATA.encode()).decode()
    last_applied = json.dumps({"kind": "Secret", "stringData": {"password": SECRET_DATA}})
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "db-credentials",
            "namespace": NAMESPACE,
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied},
        },
        "data": {"password": encoded},
    }


def config_map() -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": NAMESPACE},
        "data": {
            "db_password": CONFIG_PASSWORD,
            "DATABASE_URL": f"postgres://app:{URL_PASSWORD}@db:5432/shop",
        },
    }


def planted_snapshots(repo: Path) -> tuple[Snapshot, Snapshot]:
    """(healthy with a Secret and a ConfigMap, the same with credentials in frontend's env)."""
    base = plus(healthy(repo), secret(), config_map())
    return base, with_value(base, "Deployment", "frontend", CONTAINERS, containers(base, ENV))


def containers(snapshot: Snapshot, env: list[dict[str, str]]) -> list[dict[str, object]]:
    deployment = snapshot.get("Deployment", NAMESPACE, "frontend")
    assert deployment is not None
    current = deployment.body["spec"]["template"]["spec"]["containers"]
    return [{**c, "env": [*c.get("env", []), *env]} for c in current]


def assert_clean(texts: list[str]) -> None:
    for text in texts:
        for value in PLANTED:
            assert value not in text
        assert base64.b64encode(SECRET_DATA.encode()).decode() not in text


def test_no_planted_secret_reaches_memory_or_the_pr(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    _, with_secrets = planted_snapshots(repo)
    inp = incident(with_secrets)

    change = reflect(repo, inp)

    assert change.playbook == "service-publish-not-ready-addresses"
    assert any("/cases/" in path for path in change.files)  # the snapshots, stored redacted
    assert_clean([*change.files.values(), change.title, change.body, *change.notes])


def test_a_fix_to_a_credential_writes_no_rule_with_its_value(tmp_path: Path) -> None:
    repo = manifest_repo(tmp_path)
    base, with_secrets = planted_snapshots(repo)
    deployment = Resource("Deployment", NAMESPACE, "frontend", "apps/v1")
    fixed = containers(base, ENV[1:])  # the fix dropped the stray key again
    inp = incident(base, pre=with_secrets, strategy="bisect")
    inp = replace(inp, edits=(Edit(Op.SET, MANIFESTS, deployment, CONTAINERS, fixed),))

    change = reflect(repo, inp)

    # Neither its value nor its presence is a rule: having a credential is configuration.
    assert change.rule == "" and change.playbook == ""
    assert_clean([*change.files.values(), change.title, change.body, *change.notes])
