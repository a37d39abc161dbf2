"""The Python engine notes pairs (chapter 13): each pair computes the same thing, so only the technique differs."""

from __future__ import annotations

import random

import pytest

from edumatcher.chapters.the_standard_tools import micro
from edumatcher.chapters.the_standard_tools.tools import loop_loads
from edumatcher.model import OrderStatus
from edumatcher.workloads import standard, to_order


def test_attribute_and_local_reads_agree_and_differ_only_in_the_loop() -> None:
    for op in standard(30, seed=4):
        if op[0] == "new":
            order = to_order(op)
            assert micro.attribute_reads(order, 7) == micro.local_reads(order, 7), op
    assert loop_loads(micro.attribute_reads)["LOAD_ATTR"] == micro.READS_PER_PASS
    assert loop_loads(micro.local_reads)["LOAD_ATTR"] == 0, "the locals version reads no attribute in its loop"


def test_ended_status_tests_agree_on_every_status() -> None:
    for status in OrderStatus:
        expected = status in (OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REJECTED)
        assert micro.ended_by_display(status) is expected, status
        assert micro.ended_by_frozenset(status) is expected, status
        assert micro.ended_by_constant_literal(status.value) is expected, status


def test_counters_are_the_events_counted() -> None:
    rng = random.Random(3)
    batch = [(rng.choice("abc"), rng.choice("xyz"), rng.randint(1, 9)) for _ in range(200)]
    counted: dict[str, int] = {}
    for event in micro.fills_as_events(batch):
        for who in (event["buyer"], event["seller"]):
            counted[who] = counted.get(who, 0) + 1
    assert micro.fills_as_counters(batch) == counted, "the two records hold the same counts"
    assert len(micro.FILL_BATCH) == 100


@pytest.mark.parametrize("row", [r for r in micro.LEFT_ALONE if r.idea is not None], ids=lambda r: r.labels[0])
def test_left_alone_pairs_run_and_name_their_sides(row: micro.LeftAlone) -> None:
    assert row.current is not None and row.unit >= 1
    a, b = row.idea(), row.current()
    if row.labels[0] != "counter id":  # ids differ by design; the other pairs compute equal results
        assert a == b, f"{row.labels}: {a!r} != {b!r}"
    assert row.reason_quoted and row.analogue


def test_every_seed_row_is_present_with_its_quoted_reason() -> None:
    assert len(micro.LEFT_ALONE) == 6, "the Python engine notes has six rows"
    assert micro.LEFT_ALONE[2].reason_quoted == "Measured slower"


@pytest.mark.parametrize(("ratio", "ci", "expected"), [
    (0.25, (0.24, 0.26), "faster"),
    (0.97, (0.93, 1.01), "no speed-up"),
    (1.00, (0.98, 1.03), "no speed-up"),
    (1.30, (1.20, 1.40), "no speed-up"),
])
def test_left_alone_verdict_has_two_categories(ratio: float, ci: tuple[float, float], expected: str) -> None:
    line = micro.left_alone_verdict(micro.LEFT_ALONE[0], ratio, ci)
    assert line.startswith("verdict: ") and expected in line, line
