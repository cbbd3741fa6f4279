"""Reading a webhook body safely before it is authenticated: bounded bytes, time and nesting.

Nobody is authenticated until the HMAC of the whole body is checked, so until then
a request may only cost what a budget allows:

- :class:`BodyBudget` holds the bytes and the number of bodies being read at
  once. A request reserves its declared ``Content-Length`` (or the per-body limit
  when it declares none) before a byte is read; when the reservation does not
  fit, it is refused at once (503). Eighty stalled uploads thus hold at most the
  budget, not eighty bodies.
- :func:`read_body` reads under a deadline for the *whole* body (not per chunk:
  a client trickling one byte a second never finishes) and stops at the limit.
- :func:`json_depth_exceeds` is checked after the signature and before
  ``json.loads``: CPython's parser recurses per nesting level, and a signed body
  nested a few thousand deep would end in ``RecursionError`` (a 500) instead of a
  clear 400.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class BodyTooLarge(Exception):
    pass


class BodyTooSlow(Exception):
    pass


@dataclass
class BodyBudget:
    """Bytes and bodies in flight before authentication; reservations are all or nothing."""

    max_bytes: int
    max_bodies: int
    _bytes: int = 0
    _bodies: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    @contextmanager
    def reserve(self, size: int) -> Iterator[bool]:
        """Yields whether ``size`` bytes fit; what was reserved is returned on exit."""
        with self._lock:
            fits = self._bodies < self.max_bodies and self._bytes + size <= self.max_bytes
            if fits:
                self._bytes, self._bodies = self._bytes + size, self._bodies + 1
        try:
            yield fits
        finally:
            if fits:
                with self._lock:
                    self._bytes, self._bodies = self._bytes - size, self._bodies - 1

    @property
    def in_flight(self) -> tuple[int, int]:
        """(bytes reserved, bodies being read)."""
        return self._bytes, self._bodies


async def read_body(chunks: AsyncIterator[bytes], limit: int, deadline_s: float) -> bytes:
    """The whole body, or BodyTooLarge past ``limit`` / BodyTooSlow past ``deadline_s``."""
    try:
        async with asyncio.timeout(deadline_s):
            return await _read_capped(chunks, limit)
    except TimeoutError:
        raise BodyTooSlow from None


async def _read_capped(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        parts.append(chunk)
    return b"".join(parts)


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether the JSON text ``body`` nests arrays/objects deeper than ``limit``.

    Strings are cut out first (a bracket inside a string nests nothing), then only
    brackets are kept: both steps run in C, and the loop that is left sees brackets
    only and stops at the first level past the limit.
    """
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return True
    return False
