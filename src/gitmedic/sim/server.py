"""The sim's HTTP surface on loopback: what the HTTP-probe and alert oracles read.

- ``GET /api/v2/alerts``: active alerts, Alertmanager's GettableAlert list;
- ``GET /entrypoints``: ``{service: {"success_rate", "latency_ms"}}``;
- ``GET /probe/<namespace>/<service>``: one request to an entry point, 200 or 503.
  Requests are numbered per entry point, and request *n* succeeds when
  ``frac(n * golden ratio) < success_rate``, a low-discrepancy sequence, so a
  probe sees the success rate exactly and deterministically.

stdlib ``http.server`` in a thread: the sim layer may not import FastAPI, and
three read-only routes need nothing more. The state comes from a callable, so
the server always shows the sim as it is now.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gitmedic.sim.runtime import SimState

_GOLDEN = 0.6180339887498949


class _Handler(BaseHTTPRequestHandler):
    server: _SimServer

    def do_GET(self) -> None:
        with self.server.lock:
            state = self.server.provider()
            code, body = self.server.route(self.path.split("?", 1)[0], state)
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: tests and the CLI own the terminal


class _SimServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: Callable[[], SimState]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.provider = provider
        self.lock = threading.Lock()
        self.counters: dict[str, int] = defaultdict(int)

    def route(self, path: str, state: SimState) -> tuple[int, Any]:
        if path == "/api/v2/alerts":
            return 200, state.alerts
        if path == "/entrypoints":
            return 200, state.traffic.to_json()
        if path.startswith("/probe/"):
            key = path[len("/probe/") :]
            result = state.traffic.entrypoints.get(key)
            if result is None:
                return 404, {"error": f"no entry point {key}"}
            self.counters[key] += 1
            ok = (self.counters[key] * _GOLDEN) % 1.0 < result.success_rate
            return (200 if ok else 503), {
                "ok": ok,
                "latency_ms": result.latency_ms,
                "why": result.why,
            }
        return 404, {"error": f"no route {path}"}


@contextmanager
def serve(provider: Callable[[], SimState]) -> Iterator[str]:
    """Serve the sim on 127.0.0.1 (a free port) for the duration; yields the base URL."""
    server = _SimServer(provider)
    thread = threading.Thread(target=server.serve_forever, name="gitmedic-sim-http", daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
