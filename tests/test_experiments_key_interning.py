"""Chapter 05: keyword matching by identity, decoded against interned keys; the enum metaclass hook; ratio bars."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from edumatcher.chapters.construction_and_conversion.construction import (  # noqa: E402
    KEY_KINDS,
    direct_writer,
    hooked_and_plain,
    interned_dict,
    keys_interned,
    measure_synthetic_from_dict,
    wire_dict,
)
from edumatcher.chapters.data_representation.slots import field_classes  # noqa: E402
from edumatcher.kit import Measurement, compare  # noqa: E402
from edumatcher.kit.plots import FASTER_B_COLOUR, SLOWER_B_COLOUR, UNDECIDED_COLOUR, cost_bars, ratio_bars  # noqa: E402
from edumatcher.model import Side  # noqa: E402


def _m(seconds: float, label: str) -> Measurement:
    return Measurement.from_samples([seconds * k for k in (0.98, 1.0, 1.0, 1.01, 1.02, 0.99, 1.0)], label=label)


def test_wire_keys_are_equal_but_not_interned() -> None:
    d = {f"f{i}": i for i in range(5)}
    wire, interned = wire_dict(d), interned_dict(wire_dict(d))
    assert wire == interned == d
    assert not keys_interned(wire) and keys_interned(interned)
    _, slotted = field_classes(5)
    assert slotted(**wire) == slotted(**interned) == direct_writer(slotted)(wire)


def test_measure_synthetic_from_dict_takes_either_kind_of_keys() -> None:
    assert set(KEY_KINDS) == {"wire", "interned"}
    for keys in KEY_KINDS:
        comparison = measure_synthetic_from_dict(3, budget=0.05, target=0.001, keys=keys)
        assert f"{keys} keys" in comparison.a.label and comparison.ratio > 0
    with pytest.raises(ValueError):
        measure_synthetic_from_dict(3, keys="literal")


def test_hooked_and_plain_differ_only_in_the_metaclass_hook() -> None:
    hooked, plain = hooked_and_plain()
    assert hooked.BUY is plain.BUY is Side.BUY
    assert "__getattr__" in vars(type(hooked)) and "__getattr__" not in vars(type(plain))
    with pytest.raises(AttributeError):
        hooked.SELL  # noqa: B018 - the hook runs for a missing attribute and raises


def test_ratio_bars_colour_by_outcome_and_legend_only_what_is_drawn() -> None:
    slower = compare(_m(2e-6, "slow"), _m(1e-6, "fast"))
    same = compare(_m(1e-6, "x"), _m(1e-6, "y"))
    fig = ratio_bars([slower, same], title="t")
    fig.canvas.draw()
    times, ax = fig.axes
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] < 1 < ax.get_xlim()[1]  # bars start at 1 on a log axis
    assert [t.get_text() for t in times.get_yticklabels()] == ["x\nvs y", "slow\nvs fast"]  # first pair at the top
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "1x" in ticks and "2x" in ticks, "ratio ticks are written as multiples"
    assert "2.00 → 1.00 µs" in [t.get_text() for t in times.texts], "both forms' absolute times are shown"
    assert times.get_xlabel().startswith("median time per operation (µs")
    colours = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches[:2]]  # the bars, before the band
    assert colours == [UNDECIDED_COLOUR, FASTER_B_COLOUR]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:2] == ["first form (a)", "second form (b)"]
    assert legend[2] == "second form (b) is cheaper" and "same, or undetermined" in legend
    assert not any("dearer" in text for text in legend)  # SLOWER_B_COLOUR is not drawn, so not listed
    assert SLOWER_B_COLOUR != FASTER_B_COLOUR
    assert fig.get_suptitle() == "t"
    with pytest.raises(ValueError):
        ratio_bars([])


def test_cost_bars_on_a_log_axis_draws_dots_not_bars_and_states_its_legend() -> None:
    fig = cost_bars([compare(_m(2e-6, "a"), _m(1e-6, "b"))], log=True, colours=["#b0bec5", "#1565c0"],
                    legend=[("#b0bec5", "without"), ("#1565c0", "with")])
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and not ax.patches  # no bar without a zero to start from
    assert "log scale" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["without", "with"]
    linear = cost_bars([_m(2e-6, "a"), _m(1e-6, "b")])
    assert len(linear.axes[0].patches) == 2
    with pytest.raises(ValueError):
        cost_bars([_m(2e-6, "a")], colours=["#000000", "#111111"])
