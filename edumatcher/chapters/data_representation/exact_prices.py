"""Why prices are integer ticks: a float price is an unreliable dictionary key.

The book's level index maps a price to the quantity resting there. With float
prices, two computations of "the same" price can produce different floats, and
the second lookup silently misses. With integer ticks the arithmetic is exact
and the lookup cannot miss.

>>> walk_the_ladder(100, start="100.00", tick="0.01").float_misses > 0
True
>>> walk_the_ladder(100, start="100.00", tick="0.01").tick_misses
0
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from edumatcher.ticks import to_ticks

__all__ = ["LadderWalk", "walk_the_ladder"]


@dataclass(frozen=True)
class LadderWalk:
    """The outcome of ``walk_the_ladder``: how many of ``steps`` lookups missed, per representation."""

    steps: int
    float_misses: int
    tick_misses: int
    first_float_miss: tuple[int, float, float] | None  # (step, computed key, key stored in the index)


def walk_the_ladder(steps: int, *, start: str = "100.00", tick: str = "0.01") -> LadderWalk:
    """Build a level index from exact prices, then look each price up again by stepping one tick at a time. O(steps).

    The index is keyed by the price as the client typed it (``float("100.07")``,
    or ``to_ticks("100.07")``); the lookups use a price computed by adding the
    tick ``k`` times, as a loop walking the book would. Counts the lookups that
    found nothing.
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, not {steps!r}")
    decimals = -Decimal(tick).as_tuple().exponent
    typed = [str(Decimal(start) + k * Decimal(tick)) for k in range(steps)]
    float_index = {float(p): 1 for p in typed}
    tick_index = {to_ticks(p, decimals): 1 for p in typed}
    float_misses = tick_misses = 0
    first = None
    f_price, t_price = float(start), to_ticks(start, decimals)
    f_tick, t_tick = float(tick), to_ticks(tick, decimals)
    for k, p in enumerate(typed):
        if f_price not in float_index:
            float_misses += 1
            if first is None:
                first = (k, f_price, float(p))
        if t_price not in tick_index:
            tick_misses += 1
        f_price += f_tick
        t_price += t_tick
    return LadderWalk(steps, float_misses, tick_misses, first)
