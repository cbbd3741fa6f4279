"""The queue worker: one thread handles deliveries one at a time, in arrival order.

The HTTP handler only enqueues; this thread does the work, so GitHub gets its
202 at once however slow the forge is. ``stop()`` lets the job in hand finish
(a half-handled command could leave a half-written reply) and leaves the rest
queued in the store for the next start.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

Handle = Callable[[str], None]


class Worker:
    def __init__(self, handle: Handle, on_depth: Callable[[int], None] = lambda n: None) -> None:
        self._handle, self._on_depth = handle, on_depth
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def depth(self) -> int:
        with self._idle:
            return self._pending

    def start(self, backlog: list[str]) -> None:
        for delivery_id in backlog:
            self.submit(delivery_id)
        self._thread = threading.Thread(target=self._run, name="gitmedic-worker", daemon=True)
        self._thread.start()

    def submit(self, delivery_id: str) -> None:
        with self._idle:
            self._pending += 1
            self._on_depth(self._pending)
        self._queue.put(delivery_id)

    def stop(self, timeout: float = 60.0) -> None:
        """Finish the job in hand, then stop; queued jobs stay for the next start."""
        if self._thread is None:
            return
        self._stop.set()
        self._queue.put(None)  # wakes the thread if it waits for work
        self._thread.join(timeout)
        self._thread = None

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until every submitted job is handled (tests, and a drain before exit)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _run(self) -> None:
        while True:
            delivery_id = self._queue.get()
            if delivery_id is None or self._stop.is_set():
                return
            try:
                self._handle(delivery_id)
            except Exception:  # one bad delivery must not stop the service
                log.exception("delivery %s failed", delivery_id)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._on_depth(self._pending)
                    self._idle.notify_all()
