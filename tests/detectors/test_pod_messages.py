"""kubelet and scheduler messages are read into the params playbooks act on."""

from __future__ import annotations

import pytest

from gitmedic.detectors.builtin.pod_config_error import missing_reference
from gitmedic.detectors.builtin.pod_unschedulable import classify


@pytest.mark.parametrize(
    ("message", "missing"),
    [
        ('configmap "cart-config" not found', {"kind": "ConfigMap", "name": "cart-config"}),
        ('secret "db-credentials" not found', {"kind": "Secret", "name": "db-credentials"}),
        ("couldn't find key REDIS_ADDR in ConfigMap shop/cart-config",
         {"kind": "ConfigMap", "name": "cart-config", "key": "REDIS_ADDR"}),
        ("couldn't find key password in Secret shop/db",
         {"kind": "Secret", "name": "db", "key": "password"}),
        ("failed to create containerd task: exec: no such file", None),
    ],
)  # fmt: skip
def test_config_error_messages_name_what_is_missing(
    message: str, missing: dict[str, str] | None
) -> None:
    assert missing_reference(message) == missing


@pytest.mark.parametrize(
    ("message", "reasons"),
    [
        ("0/3 nodes are available: 3 Insufficient memory.", ["insufficient-resources"]),
        ("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
         ["node-selector"]),
        ('0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
         ["unbound-pvc"]),
        ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod anti-affinity "
         "rules.", ["anti-affinity", "insufficient-resources"]),
        ("0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity rules.",
         ["anti-affinity"]),
        ("0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
         ["host-port"]),
        ("0/1 nodes are available: 1 node(s) had untolerated taint {gpu: true}.", ["taint"]),
        ("something new", ["unschedulable"]),
    ],
)  # fmt: skip
def test_scheduler_messages_are_classified(message: str, reasons: list[str]) -> None:
    assert classify(message) == reasons
