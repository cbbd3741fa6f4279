"""B-class faults: perturbations of the sim's runtime, with no Git change (FAULTS.md, B).

These are the negative controls: the cluster's manifests stay exactly as they
were, so no fix pull request can help and gitmedic must escalate instead. Each
function perturbs a running :class:`~gitmedic.sim.runtime.Sim` and returns what
it did. The defaults hit a Service other workloads call, so callers see it.
"""

from __future__ import annotations

from collections.abc import Callable

from gitmedic.detectors.finding import Resource
from gitmedic.sim.faults.targets import Injection, behind, service
from gitmedic.sim.runtime import Sim
from gitmedic.sim.traffic import Perturbation


def _service_fault(
    fault: str, reason: str, *, errors: float = 0.0, latency: float = 0.0
) -> Callable[..., Injection]:
    def inject(sim: Sim, target: str | None = None) -> Injection:
        svc = service(sim.cluster.desired, target)
        sim.perturb(Perturbation(svc.namespace, svc.name, errors, latency, reason))
        return Injection(fault, svc.ref, reason)

    inject.__name__ = fault.replace("-", "_")
    return inject


database_auth_revoked = _service_fault(
    "database-auth-revoked", "authentication failed: the database user was dropped", errors=1.0
)
cache_password_changed = _service_fault(
    "cache-password-changed",
    "NOAUTH Authentication required (password changed in the pod)",
    errors=1.0,
)
lock_contention = _service_fault("lock-contention", "queries wait on a table lock", latency=2000.0)
poison_records = _service_fault("poison-records", "a poison record fails some requests", errors=0.3)
network_delay = _service_fault("network-delay", "chaos: 500 ms network delay", latency=500.0)
network_loss = _service_fault("network-loss", "chaos: 50 % packet loss", errors=0.5)
traffic_flood = _service_fault(
    "traffic-flood", "a traffic flood saturates the service", errors=0.2, latency=800.0
)


def pod_kill(sim: Sim, target: str | None = None) -> Injection:
    """Chaos pod-kill: every pod of the workload is deleted now and comes back on its own."""
    snap = sim.cluster.desired
    wl = behind(snap, service(snap, target))
    sim.cluster.kill_pods(wl.obj.kind, wl.obj.namespace, wl.obj.name)
    return Injection(
        "pod-kill", Resource(wl.obj.kind, wl.obj.namespace, wl.obj.name, "apps/v1"), "pods killed"
    )
