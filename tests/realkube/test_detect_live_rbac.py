"""``gitmedic detect --live`` on the real API server, as the ServiceAccount the Helm
chart renders, bound by the chart's read-only ClusterRole (generated from the
detector registry)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.realkube.bot_identity import chart_rules, install_bot
from tests.realkube.boutique import boutique_objects, deploy, gitmedic, wait_for
from tests.realkube.conftest import REALKUBE
from tests.realkube.kubelet import FakeKubelet, image_missing
from tests.realkube.tier import Tier

pytestmark = REALKUBE
CATALOG = "productcatalogservice"


def faulted_boutique() -> list[dict[str, Any]]:
    """online-boutique with a selector typo on the catalog's Service."""
    objects = boutique_objects()
    for obj in objects:
        if obj["kind"] == "Service" and obj["metadata"]["name"] == CATALOG:
            obj["spec"]["selector"] = {"app": "productcatalogservic"}
    return objects


def report_image_pull_backoff(tier: Tier, namespace: str, app: str) -> None:
    """A kubelet's report, which kwok cannot make: the app's pod cannot pull its image."""
    pods = tier.plane.get_json("pods", "-n", namespace, "-l", f"app={app}")["items"]
    assert isinstance(pods, list) and pods
    images = {pod["spec"]["containers"][0]["image"] for pod in pods}
    FakeKubelet(tier.plane, namespace, [image_missing(images)]).report_once()


@pytest.fixture
def faulted(tier: Tier, namespace: str) -> str:
    deploy(tier.plane, namespace, faulted_boutique())
    report_image_pull_backoff(tier, namespace, "cartservice")

    def cart_out_of_endpoints() -> bool:
        endpoints = tier.plane.get_json("endpoints", "cartservice", "-n", namespace)
        return not any(s.get("addresses") for s in endpoints.get("subsets") or [])

    wait_for(cart_out_of_endpoints, "the real endpoints controller to drop cartservice's pod")
    return namespace


def detect(namespace: str, kubeconfig: Path) -> tuple[int, dict[str, Any], str]:
    done = gitmedic(
        "detect", "--live", "--namespace", namespace, "--format", "json", kubeconfig=kubeconfig
    )
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def test_the_bot_sees_a_selector_typo_and_a_kubelet_only_fault_through_its_rbac(
    tier: Tier, faulted: str, tmp_path: Path
) -> None:
    bot = install_bot(tier.plane, faulted, tmp_path, read_secrets=True)

    code, out, err = detect(faulted, bot)

    assert (code, err) == (1, ""), err
    seen = {(f["detector"], f["resource"]["kind"], f["resource"]["name"]) for f in out["findings"]}
    assert ("service-selector-unmatched", "Service", CATALOG) in seen
    assert any(d == "pod-image-pull" and "cartservice" in n for d, _, n in seen), seen
    assert out["errors"] == []


def test_the_bot_may_only_get_list_and_watch(tier: Tier, namespace: str, tmp_path: Path) -> None:
    rules = chart_rules(read_secrets=True)
    bot = install_bot(tier.plane, namespace, tmp_path, read_secrets=True)

    granted = can_i_list(tier, bot, namespace)

    plurals = {p for rule in rules for p in rule["resources"]}
    assert plurals <= set(granted), "every kind the detectors read is readable"
    for plural in plurals:
        assert granted[plural] == {"get", "list", "watch"}, plural
    for verb, what in (
        ("create", "deployments"),
        ("patch", "services"),
        ("delete", "pods"),
        ("update", "configmaps"),
        ("create", "pods/exec"),
    ):
        answer = tier.plane.kubectl(
            "auth", "can-i", verb, what, "-n", namespace, kubeconfig=bot, check=False
        )
        assert answer.strip() == "no", (verb, what)


def test_without_secrets_granted_detection_degrades_and_says_so(
    tier: Tier, faulted: str, tmp_path: Path
) -> None:
    bot = install_bot(tier.plane, faulted, tmp_path, read_secrets=False)

    code, out, err = detect(faulted, bot)

    assert code == 1
    assert ("service-selector-unmatched", CATALOG) in {
        (f["detector"], f["resource"]["name"]) for f in out["findings"]
    }
    [warning] = err.splitlines()
    assert warning.startswith(
        f"warning: not allowed: listing secrets (/api/v1/namespaces/{faulted}"
        "/secrets): HTTP 403 Forbidden: secrets is forbidden"
    )
    assert "detectors that read Secret ran without it: " in warning


def can_i_list(tier: Tier, kubeconfig: Path, namespace: str) -> dict[str, set[str]]:
    """``kubectl auth can-i --list``: resource -> verbs (what the API server's RBAC says)."""
    table = tier.plane.kubectl("auth", "can-i", "--list", "-n", namespace, kubeconfig=kubeconfig)
    granted: dict[str, set[str]] = {}
    for line in table.splitlines()[1:]:
        match = re.match(r"^(\S+)\s+\[.*?\]\s+\[.*?\]\s+\[(.*)\]\s*$", line)
        if match:
            resource = match.group(1).split(".", 1)[0]
            granted.setdefault(resource, set()).update(match.group(2).split())
    return granted
