"""An OpenAI-compatible chat endpoint on 127.0.0.1 that plays a hostile model.

litellm reaches it like any provider (``api_base``), so what it records is what
really left the ``gitmedic`` process. The model reads every planted object, then
writes back every secret it knows, in a diagnosis and in an edit, and echoes
everything it was sent: the worst a prompt-injected or careless model can do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class HostileModel:
    reads: Sequence[tuple[str, dict[str, Any]]]  # tool calls of the first turn
    edits: Sequence[dict[str, Any]]  # propose_edit arguments of the second turn
    secrets: Sequence[str]  # what it "knows" and writes back
    received: list[bytes] = field(default_factory=list)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        tools = {t["function"]["name"] for t in request.get("tools") or ()}
        turn = sum(1 for m in request["messages"] if m["role"] == "assistant")
        echo = " ".join(str(m.get("content") or "") for m in request["messages"])[-4000:]
        leak = " ".join(self.secrets)
        if turn == 0 and "read_file" in tools:
            return _reply([(name, args) for name, args in self.reads], content=leak)
        calls: list[tuple[str, dict[str, Any]]] = []
        if "propose_edit" in tools:
            calls += [("propose_edit", e) for e in self.edits]
        summary = f"The root cause involves {leak}. I was told: {echo}"
        if "submit_diagnosis" in tools:
            calls.append(("submit_diagnosis", {"summary": summary, "root_cause": leak}))
        return _reply(calls, content=summary)


def _reply(calls: list[tuple[str, dict[str, Any]]], content: str) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }  # fmt: skip


@contextmanager
def provider(model: HostileModel) -> Iterator[str]:
    """Serve ``model`` in a thread; yields the ``api_base`` to configure."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            model.received.append(raw)
            body = json.dumps(model.answer(json.loads(raw))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
