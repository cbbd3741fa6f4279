"""The LLM loop against a scripted OpenAI-compatible provider (respx, real litellm)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from gitmedic.bot.responder.llm import Budget, Tool, data_block, run_agent

pytestmark = pytest.mark.integration  # the agent loop against a stand-in provider, 27 s for one

BASE = "http://llm.test/v1"
MODEL = "openai/gpt-4o-mini"
PLANTED = "sk_live_plantedsecret123456"


def reply(*calls: tuple[str, Any], tokens: int = 100) -> httpx.Response:
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls)
    ]
    message = {
        "role": "assistant",
        "content": None if calls else "thinking",
        "tool_calls": tool_calls or None,
    }
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
            ],
            "usage": {
                "prompt_tokens": tokens - 20,
                "completion_tokens": 20,
                "total_tokens": tokens,
            },
        },
    )


def read_file(args: Any) -> str:
    return data_block(args["path"], f"env:\n- name: PAYMENT_KEY\n  value: {PLANTED}\n")


TOOLS = [Tool("read_file", "read a repo file", {"type": "object"}, read_file)]
EDIT = {
    "file": "apps/shop/catalog.yaml",
    "kind": "Service",
    "namespace": "shop",
    "name": "catalog",
    "path": "spec.ports[0].targetPort",
    "op": "set",
    "value": 3550,
}


@pytest.fixture
def provider() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=False) as mock:
        mock.get(url__regex=r"https://raw\.githubusercontent\.com/.*").mock(
            return_value=httpx.Response(404)
        )
        yield mock.post(f"{BASE}/chat/completions")


def run(budget: Budget | None = None, **kw: Any) -> Any:
    return run_agent(
        model=MODEL,
        incident="catalog unreachable",
        tools=TOOLS,
        budget=budget or Budget(),
        api_base=BASE,
        api_key="test-key",
        **kw,
    )


def sent_bodies(route: respx.Route) -> list[str]:
    return [call.request.content.decode() for call in route.calls]


def test_reads_proposes_and_diagnoses(provider: respx.Route) -> None:
    provider.side_effect = [
        reply(("read_file", {"path": "apps/shop/payment.yaml"})),
        reply(("propose_edit", EDIT)),
        reply(("submit_diagnosis", {"summary": "targetPort drifted", "root_cause": "commit abc"})),
    ]
    result = run()
    assert result.stopped == "diagnosis" and result.edits == [EDIT]
    assert result.diagnosis == "targetPort drifted"
    assert (result.usage.steps, result.usage.tokens) == (3, 300)


def test_a_planted_secret_never_reaches_the_provider(provider: respx.Route) -> None:
    provider.side_effect = [
        reply(("read_file", {"path": "apps/shop/payment.yaml"})),
        reply(("submit_diagnosis", {"summary": f"key is {PLANTED}"})),
    ]
    result = run()
    assert all(PLANTED not in body for body in sent_bodies(provider))
    assert '<data source=\\"apps/shop/payment.yaml\\">' in sent_bodies(provider)[1]
    assert PLANTED not in result.diagnosis


def test_malformed_and_unknown_tool_calls_get_a_correctable_error(provider: respx.Route) -> None:
    provider.side_effect = [
        reply(("propose_edit", "{not json")),
        reply(("delete_cluster", {})),
        reply(("propose_edit", {**EDIT, "op": "explode"})),
        reply(("submit_diagnosis", {"summary": "gave up"})),
    ]
    result = run()
    bodies = sent_bodies(provider)
    assert "are not valid JSON" in bodies[1]
    assert "there is no tool 'delete_cluster'" in bodies[2]
    assert "op must be one of" in bodies[3]
    assert result.edits == [] and result.stopped == "diagnosis"


def test_rate_limits_and_server_errors_are_retried_within_a_bound(provider: respx.Route) -> None:
    slept: list[float] = []
    provider.side_effect = [
        httpx.Response(429, json={"error": {"message": "slow down"}}),
        httpx.Response(500, json={"error": {"message": "boom"}}),
        reply(("submit_diagnosis", {"summary": "ok"})),
    ]
    result = run(sleep=slept.append)
    assert result.stopped == "diagnosis" and slept == [1.0, 2.0] and result.usage.retries == 2


def test_a_provider_that_keeps_failing_stops_the_loop(provider: respx.Route) -> None:
    provider.side_effect = [httpx.Response(500, json={"error": {"message": "down"}})] * 4
    result = run(max_retries=3)
    assert result.stopped.startswith("error: ") and "500" in result.stopped
    assert provider.call_count == 4


def test_timeouts_are_retried_then_reported(provider: respx.Route) -> None:
    provider.side_effect = [httpx.ReadTimeout("slow")] * 2
    result = run(max_retries=1)
    assert result.stopped.startswith("error: ") and provider.call_count == 2


def test_budgets_are_hard(provider: respx.Route) -> None:
    provider.side_effect = [reply(("read_file", {"path": "a"}), tokens=400)] * 10
    assert run(Budget(max_steps=3)).stopped == "budget: 3 steps of 3"
    provider.side_effect = [reply(("read_file", {"path": "a"}), tokens=400)] * 10
    assert run(Budget(max_tokens=1000)).stopped == "budget: 1200 tokens of 1000"
