"""Structured logs: one JSON object per line, every message redacted.

Fields: ``ts`` (UTC ISO 8601), ``level``, ``logger``, ``msg``, and any of
``event``, ``delivery``, ``result``, ``pr`` passed as ``extra=``. The
:class:`~gitmedic.reconciler.redact.RedactingFilter` runs on the handler, so a
token that reaches a log call (its exact value is in ``redact.REGISTRY``) is
masked whatever logger emitted it.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import TextIO

from gitmedic.reconciler.redact import RedactingFilter, redact_text

EXTRA_FIELDS = ("event", "delivery", "result", "pr")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in EXTRA_FIELDS:
            value = record.__dict__.get(key)
            if value is not None:
                out[key] = redact_text(str(value)) if isinstance(value, str) else value
        if record.exc_info:
            out["exc"] = redact_text(self.formatException(record.exc_info))
        return json.dumps(out, sort_keys=False)


def configure_logging(level: str = "info", stream: TextIO | None = None) -> logging.Handler:
    """Send gitmedic's and uvicorn's logs, as JSON lines, to ``stream`` (stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter())
    for name in ("gitmedic", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(level.upper())
    return handler
