"""Who may hold the server before being authenticated: caps that evict, never refuse newcomers.

Nobody is authenticated until a whole request has arrived and its HMAC checked,
so every client is a stranger while its request is being received. Refusing the
newcomer when the server is full lets strangers who arrived first (and never
finish) shut out everyone after them: four clients declaring 16 MiB, or thirty-two
that never send their two bytes, made every signed delivery a 503 for their whole
read window, and GitHub does not redeliver. A client that *does* finish, such as
GitHub sending a delivery or a kubelet asking ``/healthz``, is done within
milliseconds. So when a cap is reached, the stranger who has cost the most is
evicted (its connection closed) and the newcomer is let in:

- **connections** still receiving a request (``max_pending``): the oldest of the
  peer address holding the most of them (per-client fairness first, then age);
- **bytes** received of requests not yet complete (``max_bytes``): the largest
  holder, the oldest on a tie. Bytes count as they arrive, not as declared: a
  ``Content-Length`` reserves nothing.

Pure bookkeeping with an injected clock: :mod:`.protocol` feeds it from uvicorn's
event loop (one thread, so no lock) and closes the connections it names.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field


@dataclass
class _Pending:
    peer: str
    since: float
    received: int = 0


@dataclass
class Admission:
    max_pending: int
    max_bytes: int
    clock: Callable[[], float] = time.monotonic
    _pending: dict[Hashable, _Pending] = field(default_factory=dict)
    _bytes: int = 0

    def __post_init__(self) -> None:
        if self.max_pending < 1 or self.max_bytes < 1:
            raise ValueError("admission caps must be positive")

    def arrived(self, conn: Hashable, peer: str) -> list[Hashable]:
        """A request starts arriving on ``conn``; the connections to evict to make room."""
        self.settled(conn)
        self._pending[conn] = _Pending(peer, self.clock())
        victims = []
        while len(self._pending) > self.max_pending:
            victims.append(self._evict(self._oldest_of_busiest_peer(exclude=conn)))
        return victims

    def received(self, conn: Hashable, size: int) -> list[Hashable]:
        """``size`` more bytes of ``conn``'s request; the connections to evict (maybe itself)."""
        pending = self._pending.get(conn)
        if pending is None:
            return []
        pending.received += size
        self._bytes += size
        victims = []
        while self._bytes > self.max_bytes:
            victim = self._evict(self._largest())
            victims.append(victim)
            if victim == conn:
                break
        return victims

    def settled(self, conn: Hashable) -> None:
        """``conn``'s request arrived whole (or the connection ended): it holds nothing now."""
        pending = self._pending.pop(conn, None)
        if pending is not None:
            self._bytes -= pending.received

    @property
    def holding(self) -> tuple[int, int]:
        """(connections receiving a request, bytes of them received)."""
        return len(self._pending), self._bytes

    def _evict(self, conn: Hashable) -> Hashable:
        self.settled(conn)
        return conn

    def _oldest_of_busiest_peer(self, exclude: Hashable) -> Hashable:
        others = {c: p for c, p in self._pending.items() if c != exclude}
        counts = Counter(p.peer for p in others.values())
        busiest = max(counts.values())
        of_busiest = [c for c, p in others.items() if counts[p.peer] == busiest]
        return min(of_busiest, key=lambda c: others[c].since)

    def _largest(self) -> Hashable:
        return max(
            self._pending, key=lambda c: (self._pending[c].received, -self._pending[c].since)
        )
