"""The HTTP-probe oracle: configured URLs, each a GET; 2xx and 3xx succeed.

Redirects are not followed (a 3xx is the endpoint answering). A probe that
cannot connect or times out is a failing probe, not a measurement error: the
app not answering is exactly what the probe looks for. With ``max_latency_ms``
an answer slower than that fails too (a latency fault: the app answers, late).
Its result is ``{"failing", "total", "probes": [{"url", "ok", "status",
"message", "latency_ms"}]}``; by default it fails when any probe fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gitmedic.reconciler.http_client import LazyHttpClient
from gitmedic.reconciler.oracles.metric import MetricSpec, Reading
from gitmedic.reconciler.oracles.observation import Observation, ProbeResult

if TYPE_CHECKING:
    import httpx

DEFAULT_SPEC = MetricSpec(failure_condition='result["failing"] > 0')


class HttpProbeOracle(LazyHttpClient):
    def __init__(
        self,
        urls: Sequence[str],
        *,
        spec: MetricSpec = DEFAULT_SPEC,
        name: str = "probes",
        request_timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        verify_tls: bool = True,
        max_latency_ms: float | None = None,
    ) -> None:
        if not urls:
            raise ValueError("an HTTP probe oracle needs at least one URL")
        super().__init__(
            request_timeout=request_timeout, transport=transport, verify_tls=verify_tls
        )
        self.urls = tuple(urls)
        self.spec = spec
        self.name = name
        self.max_latency_ms = max_latency_ms

    def measure(self) -> Reading:
        return probe_reading(tuple(self._probe(url) for url in self.urls))

    def _probe(self, url: str) -> ProbeResult:
        import httpx

        try:
            response = self.client().get(url)
        except httpx.HTTPError as err:
            return ProbeResult(url, False, None, f"{type(err).__name__}: {err}")
        code = response.status_code
        took = response.elapsed.total_seconds() * 1000.0
        return judged(url, code, took, self.max_latency_ms)


def judged(url: str, code: int, latency_ms: float, max_latency_ms: float | None) -> ProbeResult:
    """One answer as a probe result: 2xx/3xx within the latency limit (if any) is ok."""
    if max_latency_ms is not None and latency_ms > max_latency_ms:
        message = f"HTTP {code} in {latency_ms:.0f} ms (limit {max_latency_ms:.0f} ms)"
        return ProbeResult(url, False, code, message, round(latency_ms, 1))
    return ProbeResult(url, 200 <= code < 400, code, f"HTTP {code}", round(latency_ms, 1))


def probe_reading(probes: tuple[ProbeResult, ...]) -> Reading:
    """The probe oracles' reading (HTTP, or the sim's), in one shape."""
    result = {
        "failing": sum(1 for p in probes if not p.ok),
        "total": len(probes),
        "probes": [
            {
                "url": p.url,
                "ok": p.ok,
                "status": p.status,
                "message": p.message,
                "latency_ms": p.latency_ms,
            }
            for p in probes
        ],
    }
    return Reading(result, Observation(probes=probes))
