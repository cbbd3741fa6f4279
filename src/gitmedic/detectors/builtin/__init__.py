"""Built-in detectors, one module each. The registry is this explicit tuple."""

from __future__ import annotations

from gitmedic.detectors.builtin import (
    anti_affinity_deadlock,
    container_port_conflict,
    dns_policy_none,
    env_duplicate,
    host_port_conflict,
    liveness_probe_aggressive,
    node_selector_unmatched,
    request_too_large,
    rollout_strategy_unsafe,
    rwo_pvc_shared,
    service_selector_unmatched,
    service_target_port,
)
from gitmedic.detectors.registry import Registry, from_module

MODULES = (
    anti_affinity_deadlock,
    container_port_conflict,
    dns_policy_none,
    host_port_conflict,
    liveness_probe_aggressive,
    node_selector_unmatched,
    request_too_large,
    rollout_strategy_unsafe,
    rwo_pvc_shared,
    env_duplicate,
    service_selector_unmatched,
    service_target_port,
)


def builtin_registry() -> Registry:
    return Registry(from_module(m) for m in MODULES)
