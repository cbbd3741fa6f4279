"""Reading a webhook body safely before it is authenticated: bounded bytes, time and nesting.

Nobody is authenticated until the HMAC of the whole body is checked, so until then
a request may only cost what a budget allows. The bytes and connections held by
requests still arriving are bounded where they arrive, in the protocol
(:mod:`.admission`); here:

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
from collections.abc import AsyncIterator


class BodyTooLarge(Exception):
    pass


class BodyTooSlow(Exception):
    pass


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
