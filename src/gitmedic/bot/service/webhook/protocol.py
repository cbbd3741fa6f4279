"""uvicorn's h11 protocol with a deadline for reading each request (headers and body).

uvicorn times out idle keep-alive connections, but not a request being read: a
client that sends one header byte every few seconds (slowloris) holds its
connection, and a slot of ``limit_concurrency``, for ever. :class:`DeadlineH11Protocol`
arms a timer when a connection opens and whenever a new request starts arriving
on a kept-alive one; it is cancelled once the request has been received in full
(h11's client side is ``DONE``), and when it fires first the connection is closed.
The app's own body deadline (:mod:`.intake`) answers 408 for a body that started
in time; this one catches what never reaches the app at all.

The same points feed :class:`~.admission.Admission` (one per process): a request
counts from its first byte (or the connection's opening) until it has arrived
whole, with the bytes received so far, and the connections admission names to
make room are closed. uvicorn's own ``limit_concurrency`` is not used: it answers
503 to the *newcomer*, ``/healthz`` included, while the strangers who came first
keep their slots.

Imported only by ``gitmedic serve`` (it imports uvicorn).
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from gitmedic.bot.service.webhook.admission import Admission

_ARRIVED = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)


class DeadlineH11Protocol(H11Protocol):
    read_timeout_s: float = 10.0
    admission: ClassVar[Admission]
    _read_deadline: asyncio.TimerHandle | None = None
    _arriving: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        self._arrive()

    def data_received(self, data: bytes) -> None:
        if self._read_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection
        if not self._arriving and self.conn.their_state is h11.IDLE:
            self._arrive()
        if self._evict(self.admission.received(self, len(data))):
            return  # this client held the most bytes: closed, its data dropped
        super().data_received(data)
        if self.conn.their_state in _ARRIVED:
            self._disarm()
            self._settle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._settle()
        super().connection_lost(exc)

    def _arrive(self) -> None:
        self._arriving = True
        peer = self.client[0] if self.client else "?"
        self._evict(self.admission.arrived(self, peer))

    def _settle(self) -> None:
        self._arriving = False
        self.admission.settled(self)

    def _evict(self, victims: list[object]) -> bool:
        """Close each victim; whether this connection was one of them."""
        for victim in victims:
            assert isinstance(victim, DeadlineH11Protocol)
            victim._arriving = False
            if not victim.transport.is_closing():
                held = self.admission.holding
                self.logger.warning(
                    "unauthenticated client %s evicted to admit others (%d receiving, %d bytes)",
                    victim.client[0] if victim.client else "?",
                    *held,
                )
                victim.transport.close()
        return self in victims

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


def with_limits(seconds: float, admission: Admission) -> type[DeadlineH11Protocol]:
    """The protocol class uvicorn is given (``http=``), with its deadline and admission set."""
    attributes = {"read_timeout_s": seconds, "admission": admission}
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), attributes)
