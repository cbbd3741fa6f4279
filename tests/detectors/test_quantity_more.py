"""Kubernetes quantities parse to exact decimals; anything else is a clear error."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gitmedic.detectors.quantity import QuantityError, parse_quantity
from gitmedic.detectors.quantity import try_quantity as quantity_or_none


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("128Mi", Decimal(128 * 2**20)),
        ("1Ki", Decimal(1024)),
        ("1.5Gi", Decimal(3 * 2**29)),
        ("2Ti", Decimal(2 * 2**40)),
        ("1Ei", Decimal(2**60)),
        ("500m", Decimal("0.5")),
        ("100m", Decimal("0.1")),
        ("250u", Decimal("0.00025")),
        ("3", Decimal(3)),
        ("0.25", Decimal("0.25")),
        (".5", Decimal("0.5")),
        ("1k", Decimal(1000)),
        ("2M", Decimal(2_000_000)),
        ("8G", Decimal(8 * 10**9)),
        ("1T", Decimal(10**12)),
        ("1E", Decimal(10**18)),  # exa, not an exponent
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("12e-3", Decimal("0.012")),
        ("+4Gi", Decimal(4 * 2**30)),
        (" 64Mi ", Decimal(64 * 2**20)),
    ],
)
def test_text_quantities(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(("value", "expected"), [(2, Decimal(2)), (0.5, Decimal("0.5"))])
def test_yaml_numbers(value: object, expected: Decimal) -> None:
    assert parse_quantity(value) == expected


def test_units_compare_exactly() -> None:
    assert parse_quantity("1Gi") > parse_quantity("1G")
    assert parse_quantity("1000m") == parse_quantity("1")
    assert parse_quantity("6e9") == parse_quantity("6G")


@pytest.mark.parametrize("bad", ["", "Mi", "1Mb", "1 Gi", "1.2.3", "ten", "1e", "1Ki3", "0x10"])
def test_malformed_text_names_the_value(bad: str) -> None:
    with pytest.raises(QuantityError, match="is not a quantity"):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [None, True, ["1Gi"], {"memory": "1Gi"}])
def test_non_scalars_are_refused(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)
    assert quantity_or_none(bad) is None


def test_quantity_or_none_passes_good_values() -> None:
    assert quantity_or_none("256Mi") == Decimal(256 * 2**20)
