"""The fault library: every A-class fault of FAULTS.md as a manifest edit, B-class as runtime.

``MANIFEST_FAULTS`` maps each A-class fault id to a :class:`ManifestFault`: the
function that edits an app's manifests (parameterised by target object and bad
value), the symptom the sim shows for it (checked by the tests), and the ids of
the detectors expected to fire on it in live mode. ``RUNTIME_FAULTS`` are the
B-class perturbations, ``BENIGN`` the changes that must stay silent. The
incidents module combines them (two faults in one commit, two commits, a fault
riding with harmless changes). A fault whose object most apps lack names a
``baseline`` extension (the baselines module): a healthy commit that adds the
object first, so the fault can be shown on apps that do not ship it.

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
from gitmedic.sim.faults.baselines import Extend, configmap_wired, database_claim
from gitmedic.sim.faults.edit import FaultNotApplicable
from gitmedic.sim.faults.targets import Injection

Inject = Callable[..., Injection]


@dataclass(frozen=True)
class ManifestFault:
    id: str
    inject: Inject  # (root, snapshot, target=None, **value) -> Injection
    symptom: str
    # "detector/rule" of the findings expected to appear in live mode (new since baseline)
    detectors: tuple[str, ...]
    # the healthy extension committed first where an app lacks the object the fault
    # breaks (see baselines); None for faults every app can take as it is
    baseline: Extend | None = None


def _f(
    fid: str, inject: Inject, symptom: str, *detectors: str, baseline: Extend | None = None
) -> ManifestFault:
    return ManifestFault(fid, inject, symptom, detectors, baseline)


MANIFEST_FAULTS = {
    f.id: f
    for f in (
        _f(
            "service-target-port",
            services.service_target_port,
            "traffic",
            "service-target-port/target-port-undeclared",
        ),
        _f(
            "service-selector-mismatch",
            services.service_selector_mismatch,
            "no-endpoints",
            # service-no-endpoints stays quiet by design: the selector selects no workload
            # that wants replicas; the unmatched selector is the finding
            "service-selector-unmatched/service-selector-unmatched",
        ),
        _f(
            "service-selector-polluted",
            services.service_selector_polluted,
            "traffic",
            "service-selector-polluted/service-selector-polluted",
        ),
        _f(
            "missing-service",
            services.missing_service,
            "traffic",
            "env-service-address/service-missing",
        ),
        _f(
            "scaled-to-zero",
            services.scaled_to_zero,
            "no-endpoints",
            # replicas 0 is wanted, so service-no-endpoints stays quiet by design
            "scaled-to-zero/scaled-to-zero",
        ),
        _f(
            "nonexistent-node",
            workloads.nonexistent_node,
            "pending:node affinity/selector",
            "node-selector-unmatched/node-selector",
            "pod-unschedulable/node-selector",
        ),
        _f(
            "bad-image",
            workloads.bad_image,
            "waiting:ImagePullBackOff",
            "pod-image-pull/image-pull",
        ),
        _f(
            "wrong-command",
            workloads.wrong_command,
            "waiting:CrashLoopBackOff",
            "pod-crashloop/crashloop",
        ),
        _f(
            "env-wrong-port",
            services.env_wrong_port,
            "traffic",
            "env-service-address/port-mismatch",
        ),
        # an absent variable leaves no trace in any snapshot: only the oracles (traffic,
        # alerts) and a diff against history can see it
        _f("env-missing", services.env_missing, "traffic"),
        _f("env-shadowed", services.env_shadowed, "traffic", "env-duplicate/env-duplicate"),
        _f(
            "liveness-probe-wrong",
            workloads.liveness_probe_wrong,
            "waiting:CrashLoopBackOff",
            "probe-port/liveness-probe-port",
            "pod-crashloop/crashloop",
        ),
        _f(
            "liveness-probe-aggressive",
            workloads.liveness_probe_aggressive,
            "waiting:CrashLoopBackOff",
            "liveness-probe-aggressive/kill-window-short",
            "pod-crashloop/crashloop",
        ),
        _f(
            "readiness-probe-wrong",
            workloads.readiness_probe_wrong,
            "not-ready",
            "probe-port/readiness-probe-port",
        ),
        _f(
            "memory-limit-too-small",
            workloads.memory_limit_too_small,
            "waiting:CrashLoopBackOff",
            "memory-limit-too-small/memory-limit-too-small",
            "pod-crashloop/oom-killed",
        ),
        _f(
            "request-too-large",
            workloads.request_too_large,
            "pending:Insufficient memory",
            "request-too-large/container-request",
            "pod-unschedulable/insufficient-resources",
        ),
        # throttling shows only as latency (the oracles' evidence); no snapshot holds usage
        _f("cpu-limit-too-tight", workloads.cpu_limit_too_tight, "latency"),
        _f(
            "missing-configmap",
            workloads.missing_configmap,
            "waiting:ContainerCreating",
            "missing-reference/configmap-missing",
            # no live detector reads FailedMount / ContainerCreating yet (a detector gap);
            # what the callers see is judged instead
            "service-no-endpoints/service-no-endpoints",
            baseline=configmap_wired,
        ),
        _f(
            "configmap-key-dropped",
            workloads.configmap_key_dropped,
            "waiting:CreateContainerConfigError",
            "missing-reference/configmap-key-missing",
            "pod-config-error/configmap-key-missing",
            baseline=configmap_wired,
        ),
        _f(
            "pvc-claim-broken",
            workloads.pvc_claim_broken,
            "pending:persistentvolumeclaim",
            "missing-reference/pvc-missing",
            "pod-unschedulable/unbound-pvc",
            baseline=database_claim,
        ),
        _f(
            "anti-affinity-deadlock",
            workloads.anti_affinity_deadlock,
            "pending:anti-affinity",
            "anti-affinity-deadlock/replicas-exceed-domains",
            "pod-unschedulable/anti-affinity",
        ),
        _f(
            "sidecar-port-conflict",
            workloads.sidecar_port_conflict,
            "waiting:CrashLoopBackOff",
            "container-port-conflict/same-port",
            "pod-crashloop/crashloop",
        ),
        _f(
            "host-port-conflict",
            workloads.host_port_conflict,
            "pending:free ports",
            "host-port-conflict/host-port-replicas",
            "pod-unschedulable/host-port",
        ),
        _f(
            "init-container-hang",
            workloads.init_container_hang,
            "init-stuck",
            "pod-init-stuck/init-running",
        ),
        _f(
            "rollout-strategy-unsafe",
            workloads.rollout_strategy_unsafe,
            "rollout-outage",
            "rollout-strategy-unsafe/all-pods-unavailable",
            "service-no-endpoints/service-no-endpoints",
        ),
        _f(
            "dns-policy-none",
            services.dns_policy_none,
            "traffic",
            "dns-policy-none/nameservers-external",
        ),
        _f(
            "network-policy-deny-all",
            services.network_policy_deny_all,
            "traffic",
            "network-policy-isolation/network-policy-isolation",
        ),
        _f(
            "resource-quota-blocks",
            services.resource_quota_blocks,
            "failed-create",
            "resource-quota-blocks/resource-quota-blocks",
        ),
        _f(
            "hpa-no-cpu-request",
            workloads.hpa_no_cpu_request,
            "hpa-inactive",
            "hpa-no-cpu-request/hpa-no-cpu-request",
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
    "pod-label": benign.pod_label,
    "pod-annotation": benign.pod_annotation,
    "env-added": benign.env_added,
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
