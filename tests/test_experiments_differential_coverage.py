"""Chapter 03's differential-coverage experiment: the ladder catches the planted bug, the wide prices do not."""

from __future__ import annotations

import pytest

from edumatcher.chapters.measuring_honestly.differential_coverage import catch_rates, price_collisions


def test_ladder_catches_the_planted_bug_wide_prices_miss_it_and_the_real_book_passes() -> None:
    rates = catch_rates(seeds=4, ops=200)
    assert rates["ladder"].caught == 4 and rates["wide"].caught == 0
    assert rates["ladder"].control_diverged == rates["wide"].control_diverged == 0
    assert "seed 0" in rates["ladder"].first_catch
    assert rates["wide"].first_catch == "no seed caught the planted bug"


def test_price_collisions_explain_why() -> None:
    assert price_collisions("ladder", seeds=3, ops=200) > 0.8
    assert price_collisions("wide", seeds=3, ops=200) < 0.05
    with pytest.raises(ValueError):
        price_collisions("narrow")
