"""Health of observed objects, for the sim's Application and its summary.

The sim judges its objects with the project's health functions (gitops-engine's
rules, one per kind, in ``gitmedic.reconciler.health``), so the sim and the
reconciler can never disagree about what Healthy means. Kinds without a health
rule (ConfigMaps, Endpoints...) count as Healthy here, as Argo CD does when it
aggregates an Application.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gitmedic.reconciler.health import HealthStatus as Status
from gitmedic.reconciler.health import health_of as _health_of

__all__ = ["Status", "health_of", "worst"]


def worst(statuses: Iterable[Status]) -> Status:
    return max(statuses, key=lambda s: s.rank, default=Status.HEALTHY)


def health_of(body: Mapping[str, Any]) -> tuple[Status, str]:
    health = _health_of(body)
    if health is None:
        return Status.HEALTHY, ""
    return health.status, health.message
