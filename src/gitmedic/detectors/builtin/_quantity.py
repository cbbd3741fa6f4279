"""Kubernetes resource quantities (``500m``, ``1.5Gi``, ``1e3``) as exact decimals.

The grammar is the API's (``k8s.io/apimachinery/pkg/api/resource``)::

    quantity = signed-number suffix
    suffix   = binary-SI (Ki Mi Gi Ti Pi Ei) | decimal-SI (n u m "" k M G T P E)
             | decimal-exponent ("e" or "E" followed by a signed integer)

``E`` alone is exa, ``E3`` an exponent. YAML may also hand us a plain int or
float (``cpu: 0.5``). Values are :class:`~decimal.Decimal` so that ``100m`` of
CPU and ``1.5Gi`` of memory compare exactly; a value that does not parse raises
:class:`QuantityError` naming it, never a generic exception.
"""

from __future__ import annotations

import re
from decimal import Decimal

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?\d+)|(?P<decimal>[numkMGTPE]?))$"
)


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity."""


def parse_quantity(value: object) -> Decimal:
    """The exact amount ``value`` denotes (cores for CPU, bytes for memory)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(value.strip())
    if match is None:
        raise QuantityError(f"{value!r} is not a quantity")
    number = Decimal(match["number"])  # the pattern admits only decimal literals
    if match["binary"]:
        return number * Decimal(1024 ** _BINARY[match["binary"]])
    if match["exponent"] is not None:
        return number.scaleb(int(match["exponent"]))
    return number.scaleb(_DECIMAL[match["decimal"]])


def quantity_or_none(value: object) -> Decimal | None:
    """The amount, or None where the value is absent or malformed (not ours to judge)."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return None
