"""A real HTTP server on 127.0.0.1 for the security tests, on a free port."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def serving(handler: Callable[..., Any]) -> Iterator[str]:
    """``http://127.0.0.1:<port>`` while ``handler`` answers in a background thread."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
