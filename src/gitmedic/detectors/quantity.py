"""Kubernetes resource quantities (``500m``, ``128Mi``, ``1.5Gi``, ``2e3``), parsed exactly.

The grammar is the API's (k8s.io/apimachinery ``resource.Quantity``)::

    quantity ::= sign? digits ( "." digits? )? suffix?  |  sign? "." digits suffix?
    suffix   ::= binarySI | decimalSI | ("e" | "E") sign? digits
    binarySI ::= Ki | Mi | Gi | Ti | Pi | Ei          (powers of 1024)
    decimalSI::= n | u | m | "" | k | M | G | T | P | E  (powers of 1000)

Values are :class:`decimal.Decimal` so ``0.1`` CPU is exactly a tenth and
comparisons never suffer float rounding. YAML may also give a plain int or
float (``memory: 1073741824``), which is accepted. Anything else raises
:class:`QuantityError` naming the bad text: a manifest with an invalid quantity
is rejected by the API server, and a detector must not guess.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "Ki": Decimal(1024),
    "Mi": Decimal(1024) ** 2,
    "Gi": Decimal(1024) ** 3,
    "Ti": Decimal(1024) ** 4,
    "Pi": Decimal(1024) ** 5,
    "Ei": Decimal(1024) ** 6,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exponent>[+-]?\d+))?"
)
MI = 1024**2
GI = 1024**3
_MAX_EXPONENT = 100  # far beyond any real quantity; bounds the work a hostile value can cause


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


def parse_quantity(value: object) -> Decimal:
    """The quantity's value in base units (bytes, cores)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity")
    m = _QUANTITY.fullmatch(value.strip())
    if m is None:
        raise QuantityError(f"{value!r} is not a quantity (e.g. 500m, 128Mi, 1.5Gi, 2e3)")
    number = Decimal(m["number"])
    if m["exponent"] is not None:
        exponent = int(m["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"{value!r}: exponent out of range")
        return number.scaleb(exponent)
    return number * _SUFFIXES[m["suffix"] or ""]


def try_quantity(value: object) -> Decimal | None:
    """The quantity, or None when ``value`` is absent or malformed."""
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except (QuantityError, InvalidOperation):
        return None


def millicores(value: object) -> int | None:
    """A CPU quantity in whole millicores, rounded up as the API rounds (``0.1`` -> 100)."""
    amount = try_quantity(value)
    return None if amount is None else math.ceil(amount * 1000)


def whole_bytes(value: object) -> int | None:
    """A memory or storage quantity in whole bytes, rounded up as the API rounds."""
    amount = try_quantity(value)
    return None if amount is None else math.ceil(amount)


def format_bytes(value: Decimal) -> str:
    """A byte count in the largest binary unit that keeps it readable (``10Mi``)."""
    for unit in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        scaled = value / _SUFFIXES[unit]
        if abs(scaled) >= 1:
            return f"{scaled.normalize():f}{unit}"
    return f"{value.normalize():f}"
