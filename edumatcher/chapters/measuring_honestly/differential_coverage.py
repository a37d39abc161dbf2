"""How often a differential test catches a planted bug, depending on the prices it draws.

The C++ engine README (quoted, a C++ engine) planted a time-priority bug, taking the back of
a price level's queue instead of its front; a random test with continuous prices
missed it, because two orders almost never shared a price, and a 10-tick ladder
caught it at once. ``catch_rates`` repeats that experiment on this engine: the
planted ``differential.LifoTieBook`` (newest first at equal prices) against the
reference ``NaiveBook``, and the real ``OrderBook`` as a control, on the
``"wide"`` and ``"ladder"`` distributions. ``price_collisions`` measures why:
the share of priced orders that arrive at a price some earlier order already used.

>>> rates = catch_rates(seeds=2, ops=200)
>>> rates["ladder"].caught, rates["ladder"].control_diverged
(2, 0)
"""

from __future__ import annotations

from dataclasses import dataclass

from edumatcher.book import OrderBook
from edumatcher.differential import (
    PRICE_DISTRIBUTIONS,
    DifferentialResult,
    LifoTieBook,
    generate_case,
    run_differential,
)
from edumatcher.reference import NaiveBook

__all__ = ["Coverage", "catch_rates", "price_collisions"]


@dataclass(frozen=True)
class Coverage:
    """One distribution's result: seeds run, seeds whose case caught the planted bug, and the control's divergences."""

    prices: str
    seeds: int
    caught: int
    control_diverged: int
    planted: DifferentialResult

    @property
    def first_catch(self) -> str:
        """The first divergence, described (what a developer would read), or a note that nothing was caught."""
        return self.planted.divergences[0].describe() if self.planted.divergences else "no seed caught the planted bug"


def catch_rates(*, seeds: int = 12, ops: int = 300, distributions: tuple[str, ...] = ("wide", "ladder")) -> dict[str, Coverage]:
    """Run ``seeds`` cases of ``ops`` operations per distribution against the planted bug and the real book.

    Every seed runs (``stop_at_first=False``), so ``caught`` counts the seeds that
    found the bug. O(distributions x seeds x ops x book size).
    """
    out: dict[str, Coverage] = {}
    for name in distributions:
        planted = run_differential(LifoTieBook, NaiveBook, seeds=range(seeds), ops_per_seed=ops, prices=name,
                                   stop_at_first=False)
        control = run_differential(OrderBook, NaiveBook, seeds=range(seeds), ops_per_seed=ops, prices=name,
                                   stop_at_first=False)
        out[name] = Coverage(name, seeds, len(planted.divergences), len(control.divergences), planted)
    return out


def price_collisions(prices: str, *, seeds: int = 12, ops: int = 300) -> float:
    """Share of priced submits whose price an earlier submit of the same case already used. O(seeds x ops).

    >>> price_collisions("ladder", seeds=2, ops=100) > price_collisions("wide", seeds=2, ops=100)
    True
    """
    if prices not in PRICE_DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {prices!r}; choose one of {list(PRICE_DISTRIBUTIONS)}")
    repeats = priced = 0
    for seed in range(seeds):
        seen: set[int] = set()
        for op in generate_case(seed, ops, prices).ops:
            price = op.get("order", {}).get("price") if op["op"] == "submit" else None
            if isinstance(price, int) and not isinstance(price, bool):
                priced += 1
                repeats += price in seen
                seen.add(price)
    return repeats / priced if priced else 0.0
