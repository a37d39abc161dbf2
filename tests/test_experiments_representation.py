"""Chapter 04's experiments: exact prices, slots, frozen classes, and the side-by-side tables."""

from __future__ import annotations

import pytest

from edumatcher.chapters.data_representation.exact_prices import walk_the_ladder
from edumatcher.chapters.data_representation.slots import (
    SlotsFigures,
    bytes_per_instance,
    field_classes,
    frozen_classes,
    measure_slots,
    ratio_report,
)
from edumatcher.kit import Comparison, Measurement, compare
from edumatcher.kit.side_by_side import QUOTED_000, Quoted, measured_here, ratio_verdict, side_by_side, timing_table

FAST = {"budget": 0.05, "target": 0.001}  # the fewest rounds a comparison takes: tests check structure, not speed


def test_float_walk_misses_and_tick_walk_never_does() -> None:
    walk = walk_the_ladder(500)
    assert walk.tick_misses == 0
    assert walk.float_misses > 0
    step, computed, stored = walk.first_float_miss
    assert computed != stored and computed == pytest.approx(stored)
    with pytest.raises(ValueError):
        walk_the_ladder(0)


def test_field_classes_differ_only_in_slots() -> None:
    plain, slotted = field_classes(5)
    assert [f for f in plain.__dataclass_fields__] == [f for f in slotted.__dataclass_fields__] == [f"f{i}" for i in range(5)]
    assert hasattr(plain(), "__dict__") and not hasattr(slotted(), "__dict__")
    assert field_classes(5) == (plain, slotted), "cached"
    with pytest.raises(ValueError):
        field_classes(0)


def test_slotted_instances_are_smaller() -> None:
    plain, slotted = field_classes(18)
    assert bytes_per_instance(slotted, 2_000) < bytes_per_instance(plain, 2_000)
    assert bytes_per_instance(slotted, 2_000) > 0


def test_measure_slots_compares_interleaved_and_reports_without_judging() -> None:
    figures = measure_slots(4, instances=1_000, seed_instances=1_000, **FAST)
    assert 0 < figures.memory_saving < 1
    for comparison in (figures.construction, figures.read):
        assert isinstance(comparison, Comparison) and comparison.paired and comparison.rounds >= 12
    assert figures.construct_plain is figures.construction.a and figures.read_slotted is figures.read.b
    assert figures.construct_ratio == figures.construction.ratio and figures.read_ratio > 0
    table = figures.beside_seed()
    # Memory: the quote, the same method here, then the instance alone; then a quote and a measurement per timing.
    assert [row[1].split(",")[0].split(":")[0] for row in table.rows] == ["quoted"] + ["measured here"] * 2 + [
        "quoted", "measured here"] * 2
    assert "4 int fields here, 18 in the Python engine notes" in table.note
    assert "95 % CI" in table.rows[4][4]
    assert figures.memory_verdict().startswith("verdict: memory: slots save ")
    reports = figures.timing_reports()
    assert len(reports) == 2 and not any(r.startswith("verdict") for r in reports)
    assert all("95 % CI" in r and "quoted" in r for r in reports)


def test_memory_verdict_follows_the_bytes() -> None:
    c = compare(_m(2.0), _m(1.0))

    def verdict(plain: float, slotted: float) -> str:
        return SlotsFigures(3, plain, slotted, c, c).memory_verdict()

    assert "slots save 25 %" in verdict(200, 150)
    assert "the same size" in verdict(100, 100)
    assert "50 % larger" in verdict(100, 150)


def test_ratio_report_states_the_interval_and_no_category() -> None:
    line = ratio_report("read", compare(_m(1.1), _m(1.0)), 1.04)
    assert line.startswith("read: ratio 1.10 (95 % CI ") and "quoted 1.04 for CPython 3.14" in line
    assert not line.startswith("verdict") and not any(w in line for w in ("slower", "faster", "same time"))


def test_frozen_classes_forbid_assignment() -> None:
    mutable, frozen = frozen_classes(3)
    with pytest.raises(AttributeError):  # FrozenInstanceError is an AttributeError
        frozen(1, 2, 3).f0 = 9
    assert hash(frozen(1, 2, 3)) == hash(frozen(1, 2, 3))
    assert "__slots__" in vars(mutable) and "__slots__" in vars(frozen)


def _m(value: float, label: str = "", spread: float = 0.01) -> Measurement:
    return Measurement.from_samples([value * (1 + spread * k) for k in (-1, 0, 0, 0, 1, -0.5, 0.5)], label=label)


def test_ratio_verdict_is_true_whatever_the_numbers() -> None:
    def line(a: float, b: float, quoted: float, spread: float = 0.01) -> str:
        return ratio_verdict("x", compare(_m(a, spread=spread), _m(b, spread=spread)), quoted)

    assert line(4, 1, 4.5).endswith("the same direction here.")
    assert line(20, 1, 4.0).endswith("the same direction here.")
    assert line(1, 2, 4.0).endswith("the opposite direction here.")
    assert line(1, 1, 4.0).endswith("the quoted effect does not show on this interpreter.")
    assert line(1, 1, 1.04).endswith("the same here: no difference either way.")
    assert line(2, 1, 1.01).endswith("a difference here that the quoted figure did not have.")
    assert line(1, 1, 4.0, spread=0.5).endswith("too noisy here to say (rerun on a quieter machine, or raise the budget).")
    first, detail = line(4, 1, 4.5).split("\n")
    assert first.startswith("verdict: ") and len(first) <= 160 and detail.startswith("    x: quoted 4.50x")


def test_timing_table_labels_every_row_with_its_source() -> None:
    table = timing_table([Quoted("a", "1 ns"), _m(2e-9, "a here")])
    assert table.rows[0][1] == QUOTED_000 and table.rows[1][1] == f"{measured_here()} (wall time)"
    assert "a here" in str(table) and "font-style:italic" in table._repr_html_()
    with pytest.raises(ValueError):
        side_by_side(["a", "b"], [["only one"]])
