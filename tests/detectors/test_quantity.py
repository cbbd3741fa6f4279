"""Kubernetes quantities parse exactly, and anything else is refused by name."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gitmedic.detectors.quantity import QuantityError, format_bytes, parse_quantity, try_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("128Mi", 128 * 2**20), ("1Ki", 1024), ("1.5Gi", 3 * 2**29), ("2Ti", 2 * 2**40),
        ("1Pi", 2**50), ("1Ei", 2**60),
        ("500m", Decimal("0.5")), ("100m", Decimal("0.1")), ("1", 1), ("0", 0),
        ("250u", Decimal("0.00025")), ("5n", Decimal("5e-9")),
        ("1k", 1000), ("1M", 10**6), ("1G", 10**9), ("1T", 10**12), ("1P", 10**15),
        ("1E", 10**18), ("1e3", 1000), ("1E3", 1000), ("2e-3", Decimal("0.002")),
        ("1.5e+2", 150), (".5", Decimal("0.5")), ("1.", 1), ("+1k", 1000), ("-1Ki", -1024),
        (" 64Mi ", 64 * 2**20), (1024, 1024), (0.25, Decimal("0.25")),
    ],
)  # fmt: skip
def test_parses_every_suffix_and_notation(text: object, value: object) -> None:
    assert parse_quantity(text) == Decimal(value)  # type: ignore[arg-type]


def test_binary_and_decimal_units_compare_exactly() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi") > parse_quantity("1G")
    assert parse_quantity("1000Mi") < parse_quantity("1Gi")
    assert parse_quantity("1") == parse_quantity("1000m")
    assert parse_quantity("0.1") + parse_quantity("0.2") == parse_quantity("300m")


@pytest.mark.parametrize(
    "text",
    ["", "Mi", "1MB", "1mi", "1 Gi", "1Gib", "one", "1e", "0x10", "1,5Gi", "--1", "1e1000",
     None, True, [1], {"a": 1}],
)  # fmt: skip
def test_rejects_what_is_not_a_quantity(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)
    assert try_quantity(text) is None


def test_format_bytes_picks_a_readable_unit() -> None:
    assert format_bytes(parse_quantity("10Mi")) == "10Mi"
    assert format_bytes(parse_quantity("1.5Gi")) == "1.5Gi"
    assert format_bytes(parse_quantity("100")) == "100"
