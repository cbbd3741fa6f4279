"""Argo CD over its REST API: ``GET /api/v1/applications/{name}?refresh=hard``.

Each check asks Argo CD to refresh the Application against Git (a hard refresh
also drops its manifest cache, so a freshly merged commit is seen at once) and
judges the answer with the shared Application rule. HTTP outcomes map to phases:

| answer                         | phase    | asked again by the sync wait |
|--------------------------------|----------|------------------------------|
| 200 with an Application        | the rule | while Progressing            |
| 401, 403                       | Failed   | no (a token problem does not heal) |
| 404                            | Failed   | no (no such application)     |
| other 4xx                      | Failed   | no                           |
| 429, 5xx, timeout, no answer, garbage JSON | Unknown | yes              |
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from gitmedic.reconciler.clock import Clock, SystemClock
from gitmedic.reconciler.http_client import LazyHttpClient
from gitmedic.reconciler.sync.argo_rules import assess_application
from gitmedic.reconciler.sync.state import SyncPhase, SyncState

if TYPE_CHECKING:
    import httpx


class ArgoCDRestWatcher(LazyHttpClient):
    def __init__(
        self,
        server: str,
        application: str,
        token: str,
        *,
        app_namespace: str = "",
        clock: Clock | None = None,
        request_timeout: float = 10.0,
        verify_tls: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.application = application
        self._token = token
        self.app_namespace = app_namespace
        self.clock = clock or SystemClock()
        # One client (and TLS context) for all polls of a wait, not one per poll.
        super().__init__(
            request_timeout=request_timeout, transport=transport, verify_tls=verify_tls
        )

    def check(self, sha: str) -> SyncState:
        import httpx

        at = self.clock.now()
        try:
            response = self._get()
        except httpx.HTTPError as err:
            return SyncState(SyncPhase.UNKNOWN, f"Argo CD unreachable: {_describe(err)}", at=at)
        if response.status_code != 200:
            return _http_error(response.status_code, self.application, at)
        try:
            app = json.loads(response.content)
        except ValueError:
            return SyncState(SyncPhase.UNKNOWN, "Argo CD answered with invalid JSON", at=at)
        return assess_application(app, sha, at)

    def _get(self) -> httpx.Response:
        params = {"refresh": "hard"}
        if self.app_namespace:
            params["appNamespace"] = self.app_namespace
        return self.client().get(
            f"{self.server}/api/v1/applications/{self.application}",
            params=params,
            headers={"Authorization": f"Bearer {self._token}"},
        )


def _describe(err: Exception) -> str:
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def _http_error(code: int, application: str, at: float) -> SyncState:
    if code in (401, 403):
        return SyncState(
            SyncPhase.FAILED,
            f"Argo CD refused the token (HTTP {code}): check the token and its RBAC "
            f"for application {application!r}",
            at=at,
        )
    if code == 404:
        return SyncState(SyncPhase.FAILED, f"Argo CD has no application {application!r}", at=at)
    if code == 429 or code >= 500:
        return SyncState(SyncPhase.UNKNOWN, f"Argo CD answered HTTP {code}", at=at)
    return SyncState(SyncPhase.FAILED, f"Argo CD answered HTTP {code}", at=at)
