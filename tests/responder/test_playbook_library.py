"""The built-in playbook library agrees with the detectors and covers the fault catalogue."""

from __future__ import annotations

import re

import pytest

from gitmedic.bot.responder.playbooks import Playbook, builtin_playbooks
from gitmedic.detectors.builtin import builtin_registry
from tests.responder.fieldpaths import parse

BOOKS = {b.id: b for b in builtin_playbooks()}
REGISTRY = builtin_registry()
# FAULTS.md table A. feature-flag is not here: no detector sees a flag flipped in a
# flagd ConfigMap (only the traffic oracles do), and a playbook needs a detector.
FAULTS_A = (
    "service-target-port", "service-selector-mismatch", "service-selector-polluted",
    "missing-service", "scaled-to-zero", "nonexistent-node", "bad-image", "wrong-command",
    "env-wrong-port", "env-missing", "env-shadowed", "liveness-probe-wrong",
    "liveness-probe-aggressive", "readiness-probe-wrong", "memory-limit-too-small",
    "request-too-large", "cpu-limit-too-tight", "missing-configmap", "configmap-key-dropped",
    "pvc-claim-broken", "rwo-pvc-shared", "anti-affinity-deadlock", "sidecar-port-conflict",
    "host-port-conflict", "init-container-hang", "rollout-strategy-unsafe", "dns-policy-none",
    "network-policy-deny-all", "internal-traffic-policy-local", "ingress-misroute",
    "resource-quota-blocks", "hpa-no-cpu-request",
)  # fmt: skip
FAULTS_B = (
    "database-auth-revoked", "cache-password-changed", "lock-contention", "poison-records",
    "node-fault", "chaos-pod-kill", "chaos-network", "traffic-flood",
)  # fmt: skip


@pytest.mark.parametrize("detector", list(REGISTRY), ids=lambda d: d.id)
def test_every_playbook_a_detector_names_exists_and_routes_back(detector: object) -> None:
    spec = REGISTRY.get(detector.id).spec  # type: ignore[attr-defined]
    for pid in spec.playbooks:
        assert pid in BOOKS, f"{spec.id} names playbook {pid}, which does not exist"
        assert spec.id in BOOKS[pid].detectors, f"{pid} does not route {spec.id}"


@pytest.mark.parametrize("book", list(BOOKS.values()), ids=lambda b: b.id)
def test_every_playbook_routes_from_real_detectors_that_name_it(book: Playbook) -> None:
    for det in book.detectors:
        assert det in REGISTRY, f"{book.id}: unknown detector {det}"
        assert book.id in REGISTRY.get(det).spec.playbooks, f"{det} does not name {book.id}"


@pytest.mark.parametrize("book", list(BOOKS.values()), ids=lambda b: b.id)
def test_every_playbook_has_its_sections_and_well_formed_paths(book: Playbook) -> None:
    headings = [line[3:].strip().lower() for line in book.body.splitlines() if line[:3] == "## "]
    assert headings == ["decide", "triage", "localize", "verify", "mitigate"]
    if book.fix is not None:
        for path in [*book.fix.paths, *book.fix.fallback]:
            # Placeholders filled with a plain word must give a path the resolver reads.
            plain = re.sub(r"\[\{[^}]+\}\]", "[0]", path.replace("{pod_spec}", "spec"))
            plain = re.sub(r"\{[^}]+\}", "x", plain)
            parse(plain)


def test_runtime_only_playbooks_never_carry_a_fix_and_cover_the_b_faults_and_levers() -> None:
    """B-class faults escalate (high risk); a runtime lever's playbook documents a
    mitigation the lever's code makes (medium: a person approves), never a field restore."""
    from gitmedic.bot.responder.levers import LEVERS

    runtime = {b.id for b in BOOKS.values() if b.runtime_only}
    levers = {lever.playbook for lever in LEVERS}
    assert runtime == set(FAULTS_B) | levers
    assert all(BOOKS[b].fix is None for b in runtime)
    assert all(BOOKS[b].risk == "high" for b in FAULTS_B)
    assert all(BOOKS[b].risk == "medium" for b in levers)


def test_every_a_fault_of_the_catalogue_has_a_playbook_of_its_name() -> None:
    missing = [f for f in FAULTS_A if f not in BOOKS]
    assert missing == []
    assert all(BOOKS[f].fault_class == f and not BOOKS[f].runtime_only for f in FAULTS_A)


def test_fix_playbooks_restore_desired_state_and_only_symptoms_lack_a_fix() -> None:
    without_fix = {b.id for b in BOOKS.values() if b.fix is None and not b.runtime_only}
    # Symptoms whose params name no field, and a deleted object (restored by the bisect).
    assert without_fix == {
        "pod-config-error", "pod-unschedulable", "deployment-unavailable",
        "service-no-endpoints", "missing-service",
    }  # fmt: skip
