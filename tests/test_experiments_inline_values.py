"""Chapter 04: where a plain instance keeps its attributes, and memory counted by the Python engine notes' method."""

from __future__ import annotations

import struct
import sys

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from edumatcher.chapters.data_representation.figures import memory_by_fields  # noqa: E402
from edumatcher.chapters.data_representation.inline_values import (  # noqa: E402
    SHARED_KEYS_MAX_SIZE,
    LayoutRow,
    largest_step,
    layout_by_fields,
    layout_by_fields_isolated,
    materialised,
)
from edumatcher.chapters.data_representation.slots import (  # noqa: E402
    SEED_SLOTS,
    bytes_per_instance,
    field_classes,
    measure_slots,
    seed_bytes_per_instance,
)

POINTER = struct.calcsize("P")


def test_seed_method_adds_the_lists_pointer_and_nothing_else() -> None:
    for n in (1, 18, 40):
        plain, slotted = field_classes(n)
        for cls in (plain, slotted):
            extra = seed_bytes_per_instance(cls, 4_000) - bytes_per_instance(cls, 4_000)
            assert POINTER - 0.5 <= extra <= POINTER + 2, (cls, extra)
    with pytest.raises(ValueError):
        seed_bytes_per_instance(plain, 0)


def test_slots_figures_report_both_methods_beside_the_quote() -> None:
    figures = measure_slots(4, instances=1_000, seed_instances=1_000, budget=0.05, target=0.001)
    assert figures.seed_slotted_bytes is not None and figures.seed_slotted_bytes > figures.slotted_bytes
    table = str(figures.beside_seed())
    assert "the Python engine notes' method" in table and "list subtracted" in table and "list pointer included" in table
    verdict = figures.seed_method_verdict()
    assert verdict.startswith("verdict: memory, counted like the Python engine notes")
    # 4 fields, not 18: the layout cannot match the quoted 18-field figures.
    assert "unlike their 3.14.10 figures" in verdict and len(verdict.splitlines()[0]) <= 160
    assert SEED_SLOTS["memory per instance"] == ("240 B", "184 B")


def test_materialising_the_dict_never_shrinks_an_instance_and_grows_it_from_311() -> None:
    plain, _ = field_classes(6)
    assert isinstance(vars(materialised(plain)()), dict)
    before, after = bytes_per_instance(plain, 2_000), bytes_per_instance(materialised(plain), 2_000)
    if sys.version_info >= (3, 11):
        assert after > before + 16, (before, after)  # a dict object appears beside the inline values
    else:
        assert abs(after - before) <= 4, (before, after)  # 3.10: the dict was there from the start


def test_layout_rows_and_the_largest_step() -> None:
    rows = layout_by_fields([2, 4, 8], instances=2_000)
    assert [r.n_fields for r in rows] == [2, 4, 8]
    assert all(r.slotted < r.plain for r in rows)
    assert rows[2].slotted - rows[1].slotted == pytest.approx(4 * POINTER, abs=2)
    synthetic = [LayoutRow(1, 80, 144, 40), LayoutRow(2, 88, 152, 48), LayoutRow(3, 900, 900, 56),
                 LayoutRow(4, 910, 910, 64)]
    assert [r.n_fields for r in largest_step(synthetic)] == [2, 3]
    with pytest.raises(ValueError):
        largest_step(synthetic[:1])
    with pytest.raises(ValueError):
        layout_by_fields([])
    assert SHARED_KEYS_MAX_SIZE == 30


@pytest.mark.skipif(sys.version_info < (3, 11), reason="inline values and the shared-keys cap are 3.11+")
def test_the_cliff_lies_at_the_shared_keys_cap() -> None:
    rows = layout_by_fields(list(range(SHARED_KEYS_MAX_SIZE - 4, SHARED_KEYS_MAX_SIZE + 3)), instances=300)
    before, after = largest_step(rows)
    assert SHARED_KEYS_MAX_SIZE - 2 <= before.n_fields < after.n_fields <= SHARED_KEYS_MAX_SIZE + 1
    assert after.plain > 3 * before.plain


def test_memory_by_fields_marks_the_largest_step() -> None:
    rows = [LayoutRow(1, 80, 144, 40), LayoutRow(2, 88, 152, 48), LayoutRow(3, 900, 900, 56)]
    fig = memory_by_fields(rows, interpreter="CPython 3.x")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert len(ax.lines) == 3
    assert any("2 → 3 fields" in t.get_text() and "900 B" in t.get_text() for t in ax.texts)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["plain", "plain, after reading obj.__dict__",
                                                                  "slots=True"]
    with pytest.raises(ValueError):
        memory_by_fields(rows[:1])


def test_the_isolated_layout_matches_the_in_process_one() -> None:
    counts = [2, 5]
    isolated = layout_by_fields_isolated(counts, instances=500)
    here = layout_by_fields(counts, instances=500)
    assert [r.n_fields for r in isolated] == counts
    for a, b in zip(isolated, here, strict=True):
        assert a.slotted == pytest.approx(b.slotted, abs=2) and a.plain == pytest.approx(b.plain, abs=4)
