"""Built-in detectors, one module each. The registry is this explicit tuple."""

from __future__ import annotations

from gitmedic.detectors.builtin import (
    anti_affinity_deadlock,
    container_port_conflict,
    dns_policy_none,
    env_duplicate,
    env_service_address,
    host_port_conflict,
    ingress_backend,
    internal_traffic_policy_local,
    liveness_probe_aggressive,
    missing_reference,
    network_policy_isolation,
    node_selector_unmatched,
    probe_port,
    request_too_large,
    rollout_strategy_unsafe,
    rwo_pvc_shared,
    scaled_to_zero,
    service_selector_polluted,
    service_selector_unmatched,
    service_target_port,
)
from gitmedic.detectors.registry import Registry, from_module

MODULES = (
    anti_affinity_deadlock,
    container_port_conflict,
    dns_policy_none,
    env_duplicate,
    env_service_address,
    host_port_conflict,
    ingress_backend,
    internal_traffic_policy_local,
    liveness_probe_aggressive,
    missing_reference,
    network_policy_isolation,
    node_selector_unmatched,
    probe_port,
    request_too_large,
    rollout_strategy_unsafe,
    rwo_pvc_shared,
    scaled_to_zero,
    service_selector_polluted,
    service_selector_unmatched,
    service_target_port,
)


def builtin_registry() -> Registry:
    return Registry(from_module(m) for m in MODULES)
