"""Built-in detectors, one module each. The registry is this explicit tuple."""

from __future__ import annotations

from gitmedic.detectors.builtin import (
    env_duplicate,
    service_selector_unmatched,
    service_target_port,
)
from gitmedic.detectors.registry import Registry, from_module

MODULES = (
    env_duplicate,
    service_selector_unmatched,
    service_target_port,
)


def builtin_registry() -> Registry:
    return Registry(from_module(m) for m in MODULES)
