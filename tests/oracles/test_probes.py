"""HTTP probes: 2xx and 3xx succeed; anything else, or no answer, fails."""

from __future__ import annotations

import httpx
import respx

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import HttpProbeOracle
from gitmedic.reconciler.transaction import VerdictPhase
from tests.support.stepping import window

URLS = [f"http://shop.test/{p}" for p in ("ok", "moved", "missing", "broken", "dead")]


@respx.mock
def test_probe_outcomes() -> None:
    respx.get(URLS[0]).mock(return_value=httpx.Response(200))
    respx.get(URLS[1]).mock(return_value=httpx.Response(302, headers={"Location": "/x"}))
    respx.get(URLS[2]).mock(return_value=httpx.Response(404))
    respx.get(URLS[3]).mock(return_value=httpx.Response(500))
    respx.get(URLS[4]).mock(side_effect=httpx.ConnectTimeout("timed out"))
    with HttpProbeOracle(URLS) as oracle:
        reading = oracle.measure()
        verdict = window([oracle], FakeClock()).verdict
    assert reading.result["failing"] == 3 and reading.result["total"] == 5
    assert [p["ok"] for p in reading.result["probes"]] == [True, True, False, False, False]
    assert reading.result["probes"][4]["message"] == "ConnectTimeout: timed out"
    assert verdict.phase is VerdictPhase.FAILED and verdict.mu == 24.0


@respx.mock
def test_all_probes_answering_pass() -> None:
    respx.get(URLS[0]).mock(return_value=httpx.Response(204))
    with HttpProbeOracle(URLS[:1]) as oracle:
        verdict = window([oracle], FakeClock()).verdict
    assert verdict.phase is VerdictPhase.SUCCESSFUL and verdict.mu == 0
