"""Deterministic names, uids, IPs and small random numbers, all derived from a seed.

The real API server names ReplicaSets ``<deployment>-<pod-template-hash>`` and
pods ``<replicaset>-<5 random chars>`` from the alphabet ``bcdfghjklmnpqrstvwxz2456789``
(no vowels, so no words). The sim derives those from a hash of the seed and the
object's identity, so the same seed gives the same names and timings every run.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@lru_cache(maxsize=65536)
def digest(*parts: object) -> bytes:
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).digest()


@lru_cache(maxsize=65536)
def suffix(length: int, *parts: object) -> str:
    raw = digest(*parts)
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in raw[:length])


def template_hash(template: Any) -> str:
    """The ``pod-template-hash`` label of a pod template (10 safe characters)."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return suffix(10, text)


@lru_cache(maxsize=65536)
def uid(*parts: object) -> str:
    h = digest("uid", *parts).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@lru_cache(maxsize=65536)
def unit(*parts: object) -> float:
    """A deterministic number in [0, 1) for ``parts``."""
    return int.from_bytes(digest("unit", *parts)[:8], "big") / 2**64


def between(low: float, high: float, *parts: object) -> float:
    return low + (high - low) * unit(*parts)


@lru_cache(maxsize=65536)
def ip(prefix: str, *parts: object) -> str:
    raw = digest("ip", *parts)
    return f"{prefix}.{raw[0] % 250 + 2}.{raw[1] % 250 + 2}"
