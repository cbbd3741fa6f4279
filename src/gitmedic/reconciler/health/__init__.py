"""Per-kind health with gitops-engine's rules: pure functions, no I/O.

Shared by the simulator (which computes the Application's health from them) and
the reconciler (whose cluster-state oracle judges the app's pods and workloads).
``health_of(body)`` dispatches on group and kind; ``worst`` aggregates.
"""

from gitmedic.reconciler.health.dispatch import RULES, health_of
from gitmedic.reconciler.health.status import HEALTHY, Health, HealthStatus, worst

__all__ = ["HEALTHY", "RULES", "Health", "HealthStatus", "health_of", "worst"]
