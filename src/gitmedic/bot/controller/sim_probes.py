"""The configured HTTP probes, answered by the sim's traffic model (``run --cluster sim``).

A probe names the real app's URL (``http://frontend.shop.svc:80/``); the sim has
no network, but its traffic model knows how a request to each Service fares
(:func:`gitmedic.sim.traffic.measure`: the share that succeeds, and the latency
through every call it makes). The host names the Service the way cluster DNS
does (``svc``, ``svc.ns``, ``svc.ns.svc``, ``svc.ns.svc.cluster.local``; no
namespace: the app's), and the answer is 200 when at least 95 % succeed (the
sim's error-rate alert's threshold) and 503 otherwise, in the latency the model
computes, judged like a real answer (:func:`~gitmedic.reconciler.oracles.probes.judged`):
so a probe with ``max_latency_ms`` fails on a latency fault. A cluster name of no
Service of the app fails as a DNS lookup would. A URL that is no cluster name
(an IP address, ``localhost``, a dotted public name) is not the sim's to answer:
:func:`service_of` says None and the probe stays a real HTTP GET.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from gitmedic.reconciler.config import ProbeConfig
from gitmedic.reconciler.oracles import MetricSpec, ProbeResult, Reading
from gitmedic.reconciler.oracles.probes import DEFAULT_SPEC, judged, probe_reading
from gitmedic.sim.alerts import ERROR_RATE_THRESHOLD
from gitmedic.sim.runtime import Sim

CLUSTER_SUFFIXES = (".svc.cluster.local", ".svc")


class SimProbeOracle:
    """One configured probe, measured on the sim's traffic at the sim's now."""

    def __init__(self, sim: Sim, probe: ProbeConfig, namespace: str, *, name: str) -> None:
        self.sim = sim
        self.probe = probe
        self.namespace = namespace
        self.name = name
        self.spec: MetricSpec = DEFAULT_SPEC

    @property
    def described(self) -> str:
        limit = f" within {self.probe.max_latency_ms:.0f} ms" if self.probe.max_latency_ms else ""
        return (
            f"HTTP probe GET {self.probe.url} (the simulator's traffic): answers 2xx or "
            f"3xx{limit} unless it failed before"
        )

    def measure(self) -> Reading:
        return probe_reading((self._answer(),))

    def _answer(self) -> ProbeResult:
        key = service_of(self.probe.url, self.namespace)
        result = self.sim.traffic().services.get(key) if key else None
        if result is None:
            reason = (
                f"{self.probe.url}: no Service {key or '?'} fronts a workload (DNS lookup fails)"
            )
            return ProbeResult(self.probe.url, False, None, reason)
        code = 200 if result.success_rate >= ERROR_RATE_THRESHOLD else 503
        answer = judged(self.probe.url, code, result.latency_ms, self.probe.max_latency_ms)
        if code != 200 and result.why:
            why = f"HTTP {code}: {result.why}"
            return ProbeResult(answer.url, False, code, why, answer.latency_ms)
        return answer


def service_of(url: str, namespace: str) -> str | None:
    """``namespace/service`` a URL's host names by cluster DNS, or None (not a cluster name)."""
    host = (urlsplit(url).hostname or "").lower()
    for suffix in CLUSTER_SUFFIXES:
        host = host.removesuffix(suffix)
    parts = host.split(".")
    if not host or len(parts) > 2 or ":" in host or host == "localhost":
        return None
    return f"{parts[1] if len(parts) == 2 else namespace}/{parts[0]}"
