"""``edumatcher.ticks``: exact conversion, floats only when exact, every refusal names the value."""

from __future__ import annotations

import doctest
from decimal import Decimal
from typing import Any

import pytest

import edumatcher.ticks
from edumatcher.ticks import from_ticks, to_ticks


def test_doctests_of_ticks_pass() -> None:
    result = doctest.testmod(edumatcher.ticks)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("price", "decimals", "ticks"),
    [
        ("100.10", 2, 10010),
        ("100.1", 2, 10010),
        (" 1.23 ", 2, 123),
        ("0", 2, 0),
        ("-0.05", 2, -5),
        ("1e2", 2, 10000),
        ("123456789012345.67", 2, 12345678901234567),
        ("7", 0, 7),
        ("0.001", 3, 1),
        (Decimal("1.5"), 2, 150),
        (Decimal("2.50"), 1, 25),
        (3, 2, 300),
        (-3, 4, -30000),
        (0.25, 2, 25),
        (0.5, 2, 50),
        (1.75, 2, 175),
        (1e15, 0, 10**15),
    ],
)
def test_exact_conversions(price: Any, decimals: int, ticks: int) -> None:
    result = to_ticks(price, decimals)
    assert result == ticks and type(result) is int


@pytest.mark.parametrize(("price", "decimals"), [(0.1, 2), (0.3, 1), (1.005, 2), (2.675, 2), (1e-7, 6)])
def test_floats_that_are_not_exactly_on_the_grid_are_refused(price: float, decimals: int) -> None:
    with pytest.raises(ValueError, match="not a multiple of") as caught:
        to_ticks(price, decimals)
    assert repr(price) in str(caught.value)


@pytest.mark.parametrize(("price", "decimals"), [("1.005", 2), (Decimal("0.001"), 2), ("0.5", 0), ("-1.001", 2)])
def test_off_tick_values_are_refused_with_the_value_named(price: Any, decimals: int) -> None:
    with pytest.raises(ValueError, match="not a multiple of") as caught:
        to_ticks(price, decimals)
    assert repr(price) in str(caught.value)


@pytest.mark.parametrize(
    ("price", "fragment"),
    [
        (True, "is a bool"),
        (False, "is a bool"),
        (None, "has type NoneType"),
        ([1], "has type list"),
        (b"1", "has type bytes"),
        ("abc", "is not a decimal number"),
        ("", "is not a decimal number"),
        ("NaN", "is not a finite number"),
        ("Infinity", "is not a finite number"),
        (Decimal("NaN"), "is not a finite number"),
        (float("nan"), "is not a finite number"),
        (float("inf"), "is not a finite number"),
        (float("-inf"), "is not a finite number"),
    ],
)
def test_bad_types_and_non_numbers_are_refused_with_the_value_named(price: Any, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        to_ticks(price, 2)
    assert fragment in str(caught.value) and repr(price) in str(caught.value)


@pytest.mark.parametrize("decimals", [-1, True, 1.5, "2", None])
def test_bad_decimals_are_refused(decimals: Any) -> None:
    with pytest.raises(ValueError, match="decimals") as caught:
        to_ticks("1", decimals)
    assert repr(decimals) in str(caught.value)


@pytest.mark.parametrize(
    ("ticks", "decimals", "expected"),
    [(10010, 2, "100.10"), (-5, 2, "-0.05"), (0, 2, "0.00"), (7, 0, "7"), (1, 3, "0.001"), (10**17, 2, "1000000000000000.00")],
)
def test_from_ticks_is_exact_with_exactly_decimals_places(ticks: int, decimals: int, expected: str) -> None:
    result = from_ticks(ticks, decimals)
    assert isinstance(result, Decimal) and str(result) == expected


@pytest.mark.parametrize("ticks", [True, 1.0, "1", None])
def test_from_ticks_refuses_non_ints(ticks: Any) -> None:
    with pytest.raises(ValueError, match="ticks must be an int") as caught:
        from_ticks(ticks, 2)
    assert repr(ticks) in str(caught.value)


@pytest.mark.parametrize("text", ["0.01", "99.99", "-12.30", "100", "123456789.12"])
def test_round_trip(text: str) -> None:
    assert from_ticks(to_ticks(text, 2), 2) == Decimal(text)
    assert to_ticks(from_ticks(to_ticks(text, 2), 2), 2) == to_ticks(text, 2)


@pytest.mark.parametrize("text", ["1.0000000000000000000000000001", "10000000000000000.000000000001", "-0.0000000000000000000000000000001"])
def test_long_prices_are_not_rounded_onto_the_grid(text: str) -> None:
    with pytest.raises(ValueError, match="not a multiple"):
        to_ticks(text, 2)


def test_long_prices_on_the_grid_convert_exactly() -> None:
    assert to_ticks("123456789012345678901234567890.12", 2) == 12345678901234567890123456789012
    assert to_ticks("-0.50", 2) == -50 and to_ticks("1E+30", 0) == 10**30 and to_ticks("0E-40", 2) == 0
