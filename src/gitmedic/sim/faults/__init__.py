"""The fault library: every A-class fault of FAULTS.md as a manifest edit, B-class as runtime.

``MANIFEST_FAULTS`` maps each A-class fault id to a :class:`ManifestFault`: the
function that edits an app's manifests (parameterised by target object and bad
value), the symptom the sim shows for it (checked by the tests), and the ids of
the detectors expected to fire on it in live mode. ``RUNTIME_FAULTS`` are the
B-class perturbations, ``BENIGN`` the changes that must stay silent. The
incidents module combines them (two faults in one commit, two commits, a fault
riding with harmless changes).

Symptoms are named kinds of evidence:
``waiting:<Reason>`` a container of the target waits with that reason;
``pending:<text>`` a pod Pending whose FailedScheduling message holds text;
``init-stuck`` a pod stuck in its init containers; ``not-ready`` a pod running
but never Ready; ``failed-create`` its ReplicaSet cannot create pods;
``no-endpoints`` the target Service has no ready endpoint; ``traffic`` an entry
point answers under 100 %; ``latency`` an entry point is slower;
``hpa-inactive`` an HPA reports ScalingActive=False; ``rollout-outage`` the
next rollout takes the service down; ``none`` no runtime symptom the sim can
model (the fault is still injectable and detectable in desired state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.sim.faults import benign, services, workloads
from gitmedic.sim.faults.edit import FaultNotApplicable
from gitmedic.sim.faults.targets import Injection

Inject = Callable[..., Injection]


@dataclass(frozen=True)
class ManifestFault:
    id: str
    inject: Inject  # (root, snapshot, target=None, **value) -> Injection
    symptom: str
    detectors: tuple[str, ...]  # expected to fire in live mode


def _f(fid: str, inject: Inject, symptom: str, *detectors: str) -> ManifestFault:
    return ManifestFault(fid, inject, symptom, detectors)


MANIFEST_FAULTS = {
    f.id: f
    for f in (
        _f("service-target-port", services.service_target_port, "traffic", "service-target-port"),
        _f(
            "service-selector-mismatch",
            services.service_selector_mismatch,
            "no-endpoints",
            "service-selector-unmatched",
            "service-no-ready-endpoints",
        ),
        _f(
            "service-selector-polluted",
            services.service_selector_polluted,
            "traffic",
            "service-multiple-workloads",
        ),
        _f("missing-service", services.missing_service, "traffic", "env-service-address"),
        _f(
            "scaled-to-zero",
            services.scaled_to_zero,
            "no-endpoints",
            "called-service-scaled-to-zero",
            "service-no-ready-endpoints",
        ),
        _f(
            "nonexistent-node",
            workloads.nonexistent_node,
            "pending:node affinity/selector",
            "pod-unschedulable",
        ),
        _f("bad-image", workloads.bad_image, "waiting:ImagePullBackOff", "pod-image-pull"),
        _f("wrong-command", workloads.wrong_command, "waiting:CrashLoopBackOff", "pod-crashloop"),
        _f("env-wrong-port", services.env_wrong_port, "traffic", "env-service-address"),
        _f("env-missing", services.env_missing, "traffic"),
        _f("env-shadowed", services.env_shadowed, "traffic", "env-duplicate"),
        _f(
            "liveness-probe-wrong",
            workloads.liveness_probe_wrong,
            "waiting:CrashLoopBackOff",
            "probe-port-undeclared",
            "pod-crashloop",
        ),
        _f(
            "liveness-probe-aggressive",
            workloads.liveness_probe_aggressive,
            "waiting:CrashLoopBackOff",
            "pod-crashloop",
        ),
        _f(
            "readiness-probe-wrong",
            workloads.readiness_probe_wrong,
            "not-ready",
            "probe-port-undeclared",
        ),
        _f(
            "memory-limit-too-small",
            workloads.memory_limit_too_small,
            "waiting:CrashLoopBackOff",
            "pod-oomkilled",
            "pod-crashloop",
        ),
        _f(
            "request-too-large",
            workloads.request_too_large,
            "pending:Insufficient memory",
            "pod-unschedulable",
        ),
        _f("cpu-limit-too-tight", workloads.cpu_limit_too_tight, "latency"),
        _f(
            "missing-configmap",
            workloads.missing_configmap,
            "waiting:ContainerCreating",
            "missing-reference",
        ),
        _f(
            "configmap-key-dropped",
            workloads.configmap_key_dropped,
            "waiting:CreateContainerConfigError",
            "missing-reference",
            "pod-config-error",
        ),
        _f(
            "pvc-claim-broken",
            workloads.pvc_claim_broken,
            "pending:persistentvolumeclaim",
            "missing-reference",
            "pod-unschedulable",
        ),
        _f(
            "anti-affinity-deadlock",
            workloads.anti_affinity_deadlock,
            "pending:anti-affinity",
            "pod-unschedulable",
        ),
        _f(
            "sidecar-port-conflict",
            workloads.sidecar_port_conflict,
            "waiting:CrashLoopBackOff",
            "pod-crashloop",
        ),
        _f(
            "host-port-conflict",
            workloads.host_port_conflict,
            "pending:free ports",
            "pod-unschedulable",
        ),
        _f("init-container-hang", workloads.init_container_hang, "init-stuck", "pod-init-stuck"),
        _f(
            "rollout-strategy-unsafe",
            workloads.rollout_strategy_unsafe,
            "rollout-outage",
            "rollout-strategy-unsafe",
        ),
        _f("dns-policy-none", services.dns_policy_none, "traffic", "dns-policy-none"),
        _f(
            "network-policy-deny-all",
            services.network_policy_deny_all,
            "traffic",
            "network-policy-isolates",
        ),
        _f(
            "resource-quota-blocks",
            services.resource_quota_blocks,
            "failed-create",
            "replicaset-failed-create",
        ),
        _f(
            "hpa-no-cpu-request", workloads.hpa_no_cpu_request, "hpa-inactive", "hpa-target-missing"
        ),
    )
}

# FAULTS.md A-class faults the library cannot inject into the bundled apps, or the sim
# does not model, and why (each still a row of the catalogue).
NOT_MODELLED = {
    "rwo-pvc-shared": "the sim does not model volume attachment (Multi-Attach)",
    "internal-traffic-policy-local": "the traffic model does not route per node",
    "ingress-misroute": "none of the bundled apps has an Ingress",
    "feature-flag": "flag semantics (flagd) are app logic the sim cannot know",
}

BENIGN = {
    "scale-up": benign.scale_up,
    "new-label": benign.new_label,
    "image-bump": benign.image_bump_known,
    "comment": benign.comment,
}


def inject(fault_id: str, root: Path, snapshot: Snapshot, **params: object) -> Injection:
    """Inject one A-class fault by id (``target=`` names the object)."""
    try:
        fault = MANIFEST_FAULTS[fault_id]
    except KeyError:
        raise FaultNotApplicable(
            f"unknown fault {fault_id!r}; known: {sorted(MANIFEST_FAULTS)}"
        ) from None
    return fault.inject(root, snapshot, **params)


__all__ = [
    "BENIGN",
    "MANIFEST_FAULTS",
    "NOT_MODELLED",
    "FaultNotApplicable",
    "Injection",
    "ManifestFault",
    "inject",
]
