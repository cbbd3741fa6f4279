"""Built-in detectors, one module each. The registry is this explicit tuple."""

from __future__ import annotations

from gitmedic.detectors.builtin import (
    deployment_unavailable,
    env_duplicate,
    hpa_no_cpu_request,
    hpa_target_missing,
    memory_limit_below_request,
    memory_limit_too_small,
    pod_config_error,
    pod_crashloop,
    pod_image_pull,
    pod_init_stuck,
    pod_unschedulable,
    resource_quota_blocks,
    service_no_endpoints,
    service_selector_unmatched,
    service_target_port,
)
from gitmedic.detectors.registry import Registry, from_module

MODULES = (
    deployment_unavailable,
    hpa_no_cpu_request,
    hpa_target_missing,
    memory_limit_below_request,
    memory_limit_too_small,
    pod_config_error,
    pod_crashloop,
    pod_image_pull,
    pod_init_stuck,
    pod_unschedulable,
    resource_quota_blocks,
    service_no_endpoints,
    env_duplicate,
    service_selector_unmatched,
    service_target_port,
)


def builtin_registry() -> Registry:
    return Registry(from_module(m) for m in MODULES)
