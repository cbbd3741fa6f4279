"""The HTTP face of the service (FastAPI): ``POST /webhooks/github``, health, readiness, metrics.

The webhook endpoint, in this order (cheap refusals first, nothing parsed
before it is authenticated):

1. ``Content-Length`` over the limit: 413 before the body is read; a body that
   streams past the limit without one: 413 as soon as it does;
2. ``X-Hub-Signature-256`` missing or not the HMAC of the raw body: 401;
3. ``X-GitHub-Event`` / ``X-GitHub-Delivery`` missing: 400; body not a JSON object: 400;
4. an event gitmedic does not handle: 202 ``ignored`` (not stored);
5. a delivery id seen before (persisted, so also after a restart): 200 ``duplicate delivery``;
6. otherwise persisted, queued, and 202 ``queued`` at once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from gitmedic.bot.server import signature
from gitmedic.bot.server.deliveries import Delivery
from gitmedic.bot.server.service import Service


class _TooLarge(Exception):
    pass


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
        refused = _refuse_declared_size(request, service.config.max_body_bytes)
        if refused is not None:
            return _answer(service, event, "too_large", refused, 413)
        try:
            body = await _read_capped(request, service.config.max_body_bytes)
        except _TooLarge:
            return _answer(service, event, "too_large", "request body too large", 413)
        if not signature.verify(
            service.config.secret, body, request.headers.get("x-hub-signature-256")
        ):
            return _answer(service, event, "unauthorized", "missing or invalid signature", 401)
        return _accept(service, request, event, body)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

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
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _answer(service, event, "malformed", "body is not JSON", 400)
    if not isinstance(payload, dict):
        return _answer(service, event, "malformed", "body is not a JSON object", 400)
    if not service.handles(event):
        return _answer(service, event, "ignored", f"event {event} ignored", 202)
    if not service.accept(Delivery(delivery_id, event, body)):
        return _answer(service, event, "duplicate", "duplicate delivery", 200)
    return _answer(service, event, "queued", "queued", 202)


def _refuse_declared_size(request: Request, limit: int) -> str | None:
    declared = request.headers.get("content-length")
    if declared is None:
        return None
    if not declared.isdigit():
        return "invalid Content-Length"
    return "request body too large" if int(declared) > limit else None


async def _read_capped(request: Request, limit: int) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _answer(service: Service, event: str, result: str, message: str, status: int) -> Response:
    service.metrics.delivery(event, result)
    return JSONResponse({"status": message}, status_code=status)
