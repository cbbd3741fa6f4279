"""GitHub's webhook signature: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>``.

Computed over the exact bytes received (never a re-serialised JSON), compared in
constant time. GitHub signs with one secret and carries no timestamp, so a
"stale" signature is one made with a rotated-out secret: it simply fails.
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def sign(secret: str, body: bytes) -> str:
    return PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    if not secret or not header or not header.startswith(PREFIX):
        return False
    return hmac.compare_digest(sign(secret, body).encode(), header.strip().encode())
