"""``GITMEDIC_NOTIFY_URL``: a chat message when gitmedic escalates or reverts.

An escalation waits for a person and a revert undid a merge; both deserve a
message where the team looks, not only an issue. The payload is Slack's incoming
webhook shape, ``{"text": ...}``, which Mattermost, Rocket.Chat, Discord's
``/slack`` endpoints and Microsoft Teams' workflows accept as well.

Delivery never holds the monitor: each message is posted by a daemon thread with
a short timeout, and a failure is logged, never raised. The URL is itself a
credential (anyone holding a Slack webhook URL can post), so it is registered
for redaction, and every text is redacted (registered secrets and credential
shapes) before it leaves. Only ``https`` is accepted, or ``http`` to a loopback address (a local
relay, the tests).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import urllib.request
from collections.abc import Callable
from urllib.parse import urlsplit

from gitmedic.reconciler.redact import REGISTRY, redact_text

log = logging.getLogger(__name__)
TIMEOUT_S = 5.0
MAX_TEXT = 3_000  # Slack truncates a message's text past 3,000 characters in blocks


class NotifyConfigError(ValueError):
    pass


def check_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and _loopback(host):
        return url
    raise NotifyConfigError(
        "GITMEDIC_NOTIFY_URL must be an https:// URL (or http:// to a loopback address)"
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _post(url: str, body: bytes) -> None:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
        answer.read(1024)


class Notifier:
    def __init__(self, url: str, post: Callable[[str, bytes], None] = _post) -> None:
        self.url = check_url(url)
        REGISTRY.add(url)
        self._post = post
        self.threads: list[threading.Thread] = []

    def send(self, text: str) -> None:
        """Post ``text`` (scrubbed, capped) in the background; failures are logged."""
        clean = redact_text(text)
        if len(clean) > MAX_TEXT:
            clean = clean[: MAX_TEXT - 1] + "…"
        body = json.dumps({"text": clean}).encode()
        thread = threading.Thread(target=self._deliver, args=(body,), daemon=True)
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]
        thread.start()

    def _deliver(self, body: bytes) -> None:
        try:
            self._post(self.url, body)
        except Exception as exc:  # a chat outage never stops the monitor
            log.warning("notification not delivered: %s", REGISTRY.scrub(str(exc)))

    def wait(self, timeout: float = TIMEOUT_S) -> None:
        """Until the messages in flight are delivered or given up (tests, shutdown)."""
        for thread in self.threads:
            thread.join(timeout)
