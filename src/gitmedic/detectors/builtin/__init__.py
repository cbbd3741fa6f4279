"""Built-in detectors, one module each. The registry is this explicit tuple."""

from __future__ import annotations

from gitmedic.detectors.builtin import (
    env_duplicate,
    env_service_address,
    ingress_backend,
    internal_traffic_policy_local,
    missing_reference,
    network_policy_isolation,
    probe_port,
    scaled_to_zero,
    service_selector_polluted,
    service_selector_unmatched,
    service_target_port,
)
from gitmedic.detectors.registry import Registry, from_module

MODULES = (
    env_duplicate,
    service_selector_unmatched,
    service_target_port,
    missing_reference,
    service_selector_polluted,
    probe_port,
    env_service_address,
    scaled_to_zero,
    network_policy_isolation,
    internal_traffic_policy_local,
    ingress_backend,
)


def builtin_registry() -> Registry:
    return Registry(from_module(m) for m in MODULES)
