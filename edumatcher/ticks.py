"""Exact conversion between display prices and integer ticks.

Inside the engine every price is an ``int`` number of ticks: with two decimals,
``100.10`` is ``10010``. Integers compare exactly, hash exactly (so a price is a
safe dictionary key) and cost the least to compare in a heap. Conversion happens
only at the edge, here.

>>> to_ticks("100.10", 2)
10010
>>> from_ticks(10010, 2)
Decimal('100.10')
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

__all__ = ["to_ticks", "from_ticks"]


def to_ticks(price: str | Decimal | int | float, decimals: int) -> int:
    """Return ``price`` as an integer number of ticks of ``10**-decimals``.

    ``str``, ``Decimal`` and ``int`` are converted exactly. A ``float`` is accepted
    only when its exact binary value lies on the tick grid (``0.5`` at 2 decimals
    does; ``0.1`` does not, because the float nearest 0.1 is not 0.1). Off-tick
    input, a non-finite value, a ``bool`` or any other type raises ``ValueError``
    naming the value. O(number of digits).

    >>> to_ticks(Decimal("1.5"), 2), to_ticks(3, 2), to_ticks(0.25, 2)
    (150, 300, 25)
    >>> to_ticks("1.005", 2)
    Traceback (most recent call last):
    ...
    ValueError: price '1.005' is not a multiple of 0.01
    >>> to_ticks("1.0000000000000000000000000001", 2)  # no 28-digit rounding
    Traceback (most recent call last):
    ...
    ValueError: price '1.0000000000000000000000000001' is not a multiple of 0.01
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int, not {decimals!r}")
    if isinstance(price, bool):
        raise ValueError(f"price {price!r} is a bool, not a number")
    if isinstance(price, int):
        return price * 10**decimals
    if isinstance(price, float):
        # Decimal(float) is the float's exact binary value, so 0.1 stays 0.1000000000000000055...
        exact = Decimal(price) if price == price and price not in (float("inf"), float("-inf")) else None
        if exact is None:
            raise ValueError(f"price {price!r} is not a finite number")
    elif isinstance(price, Decimal):
        exact = price
    elif isinstance(price, str):
        try:
            exact = Decimal(price.strip())
        except InvalidOperation:
            raise ValueError(f"price {price!r} is not a decimal number") from None
    else:
        raise ValueError(f"price {price!r} has type {type(price).__name__}; use str, Decimal or int")
    if not exact.is_finite():
        raise ValueError(f"price {price!r} is not a finite number")
    # Integer arithmetic on the digits, not Decimal arithmetic: a Decimal context has
    # 28 digits of precision and would round a long price onto the grid silently.
    sign, digits, exponent = exact.as_tuple()
    coefficient = int("".join(map(str, digits))) if digits else 0
    shift = exponent + decimals
    if shift >= 0:
        ticks = coefficient * 10**shift
    else:
        ticks, off_grid = divmod(coefficient, 10**-shift)
        if off_grid:
            raise ValueError(f"price {price!r} is not a multiple of {Decimal(1).scaleb(-decimals)}")
    return -ticks if sign else ticks


def from_ticks(ticks: int, decimals: int) -> Decimal:
    """Return the display price of ``ticks`` as an exact ``Decimal``. O(1).

    Equivalent to: ``Decimal(ticks) / 10**decimals`` with exactly ``decimals`` places.

    >>> from_ticks(-5, 2)
    Decimal('-0.05')
    """
    if isinstance(ticks, bool) or not isinstance(ticks, int):
        raise ValueError(f"ticks must be an int, not {ticks!r}")
    return Decimal(ticks).scaleb(-decimals)
