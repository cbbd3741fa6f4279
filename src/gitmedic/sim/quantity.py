"""Kubernetes resource quantities (``500m``, ``128Mi``, ``1G``) as plain numbers.

CPU is counted in millicores and memory in bytes; anything unparseable is
``None`` so a malformed manifest is judged by the rules that read it (the sim
treats an unreadable request as absent), never an exception.
"""

from __future__ import annotations

import re
from typing import Any

_SUFFIX = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|[kMGTPE]i?|Ki)?$")

MI = 2**20
GI = 2**30


def parse(value: Any) -> float | None:
    """A quantity in base units (cores for CPU, bytes for memory)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value.strip())
    if not m:
        return None
    try:
        number = float(m[1])
    except ValueError:
        return None
    suffix = m[2] or ""
    return number / 1000 if suffix == "m" else number * _SUFFIX[suffix]


def millicores(value: Any) -> int | None:
    cores = parse(value)
    return None if cores is None else round(cores * 1000)


def mem_bytes(value: Any) -> int | None:
    amount = parse(value)
    return None if amount is None else int(amount)


def fmt_mem(n: int) -> str:
    if n % GI == 0:
        return f"{n // GI}Gi"
    if n % MI == 0:
        return f"{n // MI}Mi"
    return f"{n // 1024}Ki"
