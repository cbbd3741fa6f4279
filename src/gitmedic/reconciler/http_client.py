"""A lazily created httpx client, for what polls one server many times.

The HTTP oracles measure every few seconds over a verification window and the
Argo CD watcher polls until a sync is deployed: one client (and TLS context)
each, made on first use, so neither pays for a new connection pool per request;
httpx is imported only then. ``close()`` (or ``with``) ends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    import httpx


class LazyHttpClient:
    def __init__(
        self, *, request_timeout: float, transport: httpx.BaseTransport | None, verify_tls: bool
    ) -> None:
        self.request_timeout = request_timeout
        self.transport = transport
        self.verify_tls = verify_tls
        self._client: httpx.Client | None = None

    def client(self) -> httpx.Client:
        import httpx

        if self._client is None:
            self._client = httpx.Client(
                timeout=self.request_timeout,
                transport=self.transport,
                verify=self.verify_tls,
                follow_redirects=False,
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
