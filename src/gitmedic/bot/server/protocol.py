"""uvicorn's h11 protocol with a deadline for reading each request (headers and body).

uvicorn times out idle keep-alive connections, but not a request being read: a
client that sends one header byte every few seconds (slowloris) holds its
connection, and a slot of ``limit_concurrency``, for ever. :class:`DeadlineH11Protocol`
arms a timer when a connection opens and whenever a new request starts arriving
on a kept-alive one; it is cancelled once the request has been received in full
(h11's client side is ``DONE``), and when it fires first the connection is closed.
The app's own body deadline (:mod:`.intake`) answers 408 for a body that started
in time; this one catches what never reaches the app at all.

Imported only by ``gitmedic serve`` (it imports uvicorn).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class DeadlineH11Protocol(H11Protocol):
    read_timeout_s: float = 10.0
    _read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._read_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(self.read_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _too_slow(self) -> None:
        self._read_deadline = None
        if not self.transport.is_closing():
            self.logger.warning(
                "request not received within %ss: connection closed", self.read_timeout_s
            )
            self.transport.close()


def with_read_timeout(seconds: float) -> type[DeadlineH11Protocol]:
    """The protocol class uvicorn is given (``http=``), with its deadline set."""
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), {"read_timeout_s": seconds})
