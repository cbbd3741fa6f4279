"""Redaction: secrets never leave the process (prompts, PR bodies, comments, logs).

Three layers, applied to anything the bot sends or writes:
1. structure: Secret objects lose their values (only key names remain); env vars
   and ConfigMap keys whose *names* say credential keep their name, lose the value;
2. content: values that *look* like credentials are masked wherever they appear
   (private keys, JWTs, cloud and forge tokens, Stripe-style keys, passwords in
   URLs, ``password=...`` pairs);
3. known values: any exact secret value the process learned (e.g. its own tokens)
   is masked in all text, through :class:`SecretRegistry` and a logging filter.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

MASK = "****"
_SECRET_NAME = re.compile(
    r"(pass(word|wd)?|secret|token|api[_-]?key|apikey|credential|private[_-]?key|auth|cookie|session[_-]?key|dsn)",
    re.IGNORECASE,
)
_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),  # JWT
    re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}\b"),  # GitHub tokens
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9_]{8,}\b"),  # Stripe-style keys
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # LLM provider keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
]
_URL_PASSWORD = re.compile(r"(?P<pre>[a-z][a-z0-9+.-]*://[^:/@\s]+:)(?P<pw>[^@/\s]+)(?P<post>@)")
_PAIR = re.compile(
    r"(?P<key>\b[\w.-]*(?:password|passwd|secret|token|api[_-]?key)[\w.-]*\s*[=:]\s*)(?P<value>[^\s,;&\"']+)",
    re.IGNORECASE,
)


def looks_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask credential-looking content and every registered secret value in ``text``."""
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m['pre']}{MASK}{m['post']}", text)
    text = _PAIR.sub(lambda m: f"{m['key']}{MASK}", text)
    return REGISTRY.scrub(text)


def redact_object(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Kubernetes object safe to show: Secret values gone, credential-named values masked."""
    out = _redact_value(body)
    assert isinstance(out, dict)
    if body.get("kind") == "Secret":
        for key in ("data", "stringData"):
            if isinstance(out.get(key), dict):
                out[key] = {k: MASK for k in out[key]}
    return out


def _redact_value(value: Any, key: str = "") -> Any:
    if isinstance(value, Mapping):
        if "name" in value and "value" in value and looks_secret_name(str(value["name"])):
            return {**{k: _redact_value(v, k) for k, v in value.items()}, "value": MASK}
        return {k: (MASK if _secret_key(k, v) else _redact_value(v, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, key) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _secret_key(key: str, value: Any) -> bool:
    # A mapping key named like a credential (ConfigMap data, annotations) with a scalar value.
    return isinstance(value, str) and bool(value) and looks_secret_name(key)


class SecretRegistry:
    """Exact secret values this process knows (tokens, keys); scrubbed from all text."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, value: str | None) -> None:
        if value and len(value) >= 6:  # shorter strings would mask ordinary words
            with self._lock:
                self._values.add(value)

    def scrub(self, text: str) -> str:
        for value in sorted(self._values, key=len, reverse=True):
            text = text.replace(value, MASK)
        return text


REGISTRY = SecretRegistry()


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's rendered message."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        return True
