"""The HTTP face of the service (FastAPI): ``POST /webhooks/github``, health, readiness, metrics.

The webhook endpoint, in this order (cheap refusals first, nothing parsed
before it is authenticated):

1. ``Content-Length`` over the limit: 413 before the body is read; a body that
   streams past the limit without one: 413 as soon as it does;
2. (the connections and bytes of requests still arriving are bounded before the
   app, by evicting the costliest stranger: :mod:`.admission`; an evicted request
   ends here as a disconnect);
3. the whole body not received within the read deadline: 408;
4. ``X-Hub-Signature-256`` missing or not the HMAC of the raw body: 401;
5. ``X-GitHub-Event`` / ``X-GitHub-Delivery`` missing: 400; JSON nested past the
   depth limit, or not a JSON object: 400 (verify, then parse);
6. an event gitmedic does not handle: 202 ``ignored`` (not stored);
   for a repository this service does not serve (``serve --repos``): 202, logged,
   counted as ``unknown_repository``, not stored (:mod:`.routes`);
7. a delivery id seen before (persisted, so also after a restart), or its body lately,
   here or by another replica of a shared journal: 200 ``duplicate delivery``; that
   journal not reachable: 503 (nothing accepted, the sender delivers again);
8. otherwise persisted, queued, and 202 ``queued`` at once.

Every refusal before authentication closes the connection (``Connection:
close``): an unread body is never waited for. The ``event`` metric label comes
from a closed set (:meth:`~.metrics.Metrics.delivery`), since the header is
unauthenticated.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.requests import ClientDisconnect

from gitmedic.bot.service.webhook import signature
from gitmedic.bot.service.webhook.deliveries import Delivery
from gitmedic.bot.service.webhook.intake import (
    BodyTooLarge,
    BodyTooSlow,
    json_depth_exceeds,
    read_body,
)
from gitmedic.bot.service.webhook.service import Service
from gitmedic.reconciler.transaction.journal_store import JournalUnavailable

_CLOSE = {"Connection": "close"}
log = logging.getLogger(__name__)


def create_app(service: Service) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start()
        try:
            yield
        finally:
            service.stop()  # the job in hand finishes; the rest stays queued

    app = FastAPI(title="gitmedic", lifespan=lifespan, docs_url=None, redoc_url=None)

    @app.post("/webhooks/github")
    async def webhook(request: Request) -> Response:
        event = request.headers.get("x-github-event", "")
        limit = service.config.max_body_bytes
        declared = request.headers.get("content-length")
        refused = _refuse_declared_size(declared, limit)
        if refused is not None:
            return _answer(service, event, "too_large", refused, 413, _CLOSE)
        try:
            body = await read_body(request.stream(), limit, service.config.read_timeout_s)
        except BodyTooLarge:
            return _answer(service, event, "too_large", "request body too large", 413, _CLOSE)
        except BodyTooSlow:
            return _answer(service, event, "too_slow", "request body too slow", 408, _CLOSE)
        except ClientDisconnect:  # evicted by admission, or the client went away
            return _answer(service, event, "evicted", "connection closed", 503, _CLOSE)
        if not signature.verify(
            service.config.secret, body, request.headers.get("x-hub-signature-256")
        ):
            return _answer(service, event, "unauthorized", "missing or invalid signature", 401)
        return _accept(service, request, event, body)

    @app.get("/healthz")
    def healthz() -> Response:
        # Liveness: the monitor still makes progress (service.health); never admission.
        stalled = service.liveness()
        if stalled:
            return JSONResponse({"status": "stalled", "reason": stalled}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/readyz")
    def readyz() -> Response:
        ready = service.ready()
        return JSONResponse({"ready": ready}, status_code=200 if ready else 503)

    @app.get("/metrics")
    def metrics() -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


def _accept(service: Service, request: Request, event: str, body: bytes) -> Response:
    delivery_id = request.headers.get("x-github-delivery", "")
    if not event or not delivery_id:
        return _answer(service, event, "malformed", "missing X-GitHub-Event or -Delivery", 400)
    if json_depth_exceeds(body, service.config.max_json_depth):
        limit = service.config.max_json_depth
        return _answer(service, event, "malformed", f"JSON nested deeper than {limit}", 400)
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _answer(service, event, "malformed", "body is not JSON", 400)
    if not isinstance(payload, dict):
        return _answer(service, event, "malformed", "body is not a JSON object", 400)
    if not service.handles(event):
        return _answer(service, event, "ignored", f"event {event} ignored", 202)
    refused = service.refusal(event, payload)
    if refused is not None:  # never acted on another repository's forge
        log.warning("delivery %s ignored: %s", delivery_id, refused, extra={"event": event})
        return _answer(service, event, "unknown_repository", refused, 202)
    try:
        accepted = service.accept(Delivery(delivery_id, event, body))
    except JournalUnavailable as exc:  # cannot tell it is new: refused, for the sender to retry
        log.error("delivery %s not accepted: %s", delivery_id, exc, extra={"event": event})
        return _answer(service, event, "unavailable", "the journal cannot be reached", 503)
    if not accepted:
        return _answer(service, event, "duplicate", "duplicate delivery", 200)
    return _answer(service, event, "queued", "queued", 202)


def _refuse_declared_size(declared: str | None, limit: int) -> str | None:
    if declared is None:
        return None
    if not declared.isdigit():
        return "invalid Content-Length"
    return "request body too large" if int(declared) > limit else None


def _answer(
    service: Service,
    event: str,
    result: str,
    message: str,
    status: int,
    headers: dict[str, str] | None = None,
) -> Response:
    service.metrics.delivery(event, result)
    return JSONResponse({"status": message}, status_code=status, headers=headers)
