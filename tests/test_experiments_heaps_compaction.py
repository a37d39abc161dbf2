"""Chapter 07's compaction on a deep book: the flow, exact counts, the timed pass, per-operation times, verdicts."""

from __future__ import annotations

import gc

import pytest

from edumatcher.book import COMPACT_SLACK
from edumatcher.chapters.heaps_and_indexes.heaps import (
    CompactionCount,
    OperationTimes,
    book_at_depth,
    compaction_counts,
    compaction_verdict,
    counting_book,
    deep_flow,
    factor_growth_verdict,
    factor_pass,
    per_operation,
    rebuild_spacing_verdict,
    slow_operations_verdict,
    time_each_operation,
)
from edumatcher.kit import Measurement, compare
from edumatcher.workloads import CANCEL, NEW, prepare


def test_deep_flow_rests_a_ramp_then_holds_the_book_near_its_depth() -> None:
    ramp, stream = deep_flow(500, 2_000, seed=3)
    assert len(ramp) == 500 and len(stream) == 2_000
    assert all(op[0] == NEW and op[4] == "GTC" for op in ramp)
    book = book_at_depth(ramp, 2)
    assert len(book) == 500
    sizes = []
    for kind, arg in prepare(stream):
        book.submit(arg) if kind == NEW else book.cancel(arg)
        sizes.append(len(book))
    assert 250 < min(sizes) and max(sizes) < 750, "the stream keeps the live book near the ramp's depth"
    assert 0.35 < sum(op[0] == CANCEL for op in stream) / len(stream) < 0.55


def test_compaction_counts_follow_the_rule() -> None:
    ramp, stream = deep_flow(400, 3_000)
    rows = compaction_counts((1, 2, 8), ramp, stream)
    assert [r.factor for r in rows] == [1, 2, 8]
    cancels = {r.cancels for r in rows}
    assert cancels == {sum(op[0] == CANCEL for op in stream)}
    one, two, eight = rows
    assert one.peak_entries <= one.peak_live + COMPACT_SLACK + 1, "factor 1 holds at most live + slack (+ the one cancel that triggers)"
    assert one.rebuilds > two.rebuilds >= eight.rebuilds
    assert one.cancels_per_rebuild is not None and one.cancels_per_rebuild < 2 * (COMPACT_SLACK + 1)
    assert {r.peak_live for r in rows} == {one.peak_live}, "compaction never changes which orders are live"
    assert compaction_verdict(rows).startswith("verdict: as compact_factor grows, peak heap entries rise and rebuilds fall")
    assert CompactionCount(2, 10, 5, 0, 7).cancels_per_rebuild is None


def test_rebuild_spacing_verdict_reads_the_counts() -> None:
    def rows(spacing_one: float, spacing_two: float) -> list[CompactionCount]:
        return [CompactionCount(1, 0, 0, 10, int(10 * spacing_one)), CompactionCount(2, 0, 0, 2, int(2 * spacing_two))]

    line = rebuild_spacing_verdict({1_000: rows(80, 1_000), 4_000: rows(78, 4_200)})
    assert line.startswith("verdict: with factor 1 the rebuilds keep their spacing however deep the book")
    assert line.splitlines()[1].startswith("verdict: with factor 2 the rebuilds thin out as the book grows")
    assert all(len(part) <= 160 for part in line.splitlines())
    assert "change their spacing" in rebuild_spacing_verdict({1_000: rows(80, 1_000), 4_000: rows(130, 1_100)})
    none = {1_000: rows(80, 1_000), 4_000: [CompactionCount(1, 0, 0, 10, 800), CompactionCount(2, 0, 0, 0, 900)]}
    assert rebuild_spacing_verdict(none) == "verdict: too few rebuilds at these depths to compare their spacing"


def test_factor_pass_times_only_the_stream_on_a_book_at_depth() -> None:
    ramp, stream = deep_flow(300, 400)
    p = factor_pass(1, ramp, stream)
    assert p.label == "compact_factor=1" and p.ops_per_call == 400
    state = p.prepare()
    assert len(state[0]) == 300 and len(state[1]) == 400
    tally = p.run(state)
    assert tally is not None
    state[0].check_invariants()


def _comparison(ratio: float) -> object:
    a = Measurement.from_samples([ratio * f for f in (0.99, 1.0, 1.01, 1.0, 0.995, 1.005)])
    b = Measurement.from_samples([1.0 * f for f in (0.99, 1.0, 1.01, 1.0, 0.995, 1.005)])
    return compare(a, b)


def test_factor_growth_verdict_follows_the_intervals() -> None:
    grows = factor_growth_verdict(_comparison(1.2), _comparison(2.0), (1_000, 4_000))  # type: ignore[arg-type]
    assert grows.startswith("verdict: factor 1's extra cost grows with the depth of the book\n")
    assert all(len(v.splitlines()[0]) <= 160 for v in (grows, factor_growth_verdict(_comparison(1.5), _comparison(1.5), (1_000, 4_000))))  # type: ignore[arg-type]
    shrinks = factor_growth_verdict(_comparison(2.0), _comparison(1.2), (1_000, 4_000))  # type: ignore[arg-type]
    assert "shrinks" in shrinks
    same = factor_growth_verdict(_comparison(1.5), _comparison(1.5), (1_000, 4_000))  # type: ignore[arg-type]
    assert same.startswith("verdict: this run cannot tell")


def test_time_each_operation_marks_rebuilds_and_dict_growth_and_restores_the_collector() -> None:
    ramp, stream = deep_flow(1_500, 600)
    enabled = gc.isenabled()
    run = time_each_operation(counting_book(1), prepare(ramp + stream), 1)
    assert gc.isenabled() == enabled
    assert len(run.ns) == 2_100 and all(t >= 0 for t in run.ns)
    assert run.rebuilds and all(i >= 1_500 for i in run.rebuilds), "the ramp cancels nothing, so it rebuilds nothing"
    grown = {name for i, name, entries in run.resizes if i < 1_500}
    assert grown == {"_live", "_entries"}, "resting 1,500 orders grows both dicts' tables"
    assert any(entries >= 1_000 for _, _, entries in run.resizes)
    plain = time_each_operation(book_at_depth([], 2), prepare(ramp[:50]), 2)
    assert plain.rebuilds == [] and plain.factor == 2


def test_slow_operations_verdict_compares_medians() -> None:
    ns = [1_000] * 100
    ns[10] = ns[20] = 400_000
    ns[50] = 30_000
    slow = OperationTimes(1, ns, [10, 20], [(50, "_live", 5_000), (50, "_entries", 5_000), (5, "_live", 10)])
    line = slow_operations_verdict(slow)
    assert line.startswith("verdict: compact_factor=1: the operations that did O(n) work took far longer")
    assert "2 that rebuilt the heaps: median 400x" in line and "1 that grew a dict of 1,000+ entries: median 30x" in line
    mild = OperationTimes(2, [1_000] * 10 + [2_000], [], [(10, "_live", 2_000)])
    assert "not every kind" in slow_operations_verdict(mild)
    assert len(line.splitlines()[0]) <= 160 and line.splitlines()[1].startswith("    (ordinary operation")
    assert "no operation rebuilt" in slow_operations_verdict(OperationTimes(2, [1_000] * 5, [], []))


def test_per_operation_divides_every_sample() -> None:
    m = Measurement.from_samples([12e-6, 24e-6, 12e-6, 12e-6, 12e-6], ops_per_call=12, label="batch")
    one = per_operation(m)
    assert one.samples == pytest.approx((1e-6, 2e-6, 1e-6, 1e-6, 1e-6)) and one.ops_per_call == 1
    assert one.label == "batch, per cancel" and one.clock == m.clock
