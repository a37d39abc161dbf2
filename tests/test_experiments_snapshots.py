"""Chapter 08's snapshot experiments: the replayable stream, the counting sink, both publication policies."""

from __future__ import annotations

import pytest

from edumatcher.chapters.off_the_message_path.snapshots import (
    MIN_PASSES,
    CountingSink,
    PublicationCost,
    gap_direction,
    price_levels,
    publication_costs,
    ramped_engine,
    snapshot_costs,
    trade_pairs,
)
from edumatcher.kit import OUTCOMES, Measurement, compare
from edumatcher.sinks import IterableSource


def test_trade_pairs_leave_the_book_as_they_found_it_and_can_be_replayed() -> None:
    engine = ramped_engine(400)
    book = engine.books["EDU"]
    before = book.depth()
    stream = trade_pairs(10)
    for _ in range(3):  # ids end with each pair, so the same stream is accepted again
        sink = CountingSink()
        engine.run(IterableSource(stream), sink)
        assert sink.trades == 10
        assert book.depth() == before and len(book) == 400
        assert engine.rejects == {}


def test_ramped_engine_spreads_orders_over_levels() -> None:
    engine = ramped_engine(1_000)
    assert len(engine.books["EDU"]) == 1_000
    assert price_levels(engine) == 100  # ten orders per level on average


def test_every_change_policy_publishes_per_message_and_throttled_per_interval() -> None:
    (cost,) = publication_costs((200,), pairs=50, budget=0.05)
    assert cost.snapshots_every_change == cost.messages  # every message changed the book
    # 1 ms of market time per message and a 100 ms interval: about one snapshot per 100 messages.
    passes = cost.messages // 100
    assert 0 < cost.snapshots_throttled <= passes + 5
    assert cost.every_change.ops_per_call == 100 and cost.throttled.ops_per_call == 100
    # Interleaved: both policies ran the same rounds (plus one warm-up pass each, counted in messages).
    assert cost.comparison.paired and cost.every_change.repeat == cost.throttled.repeat == cost.comparison.rounds
    assert passes == cost.comparison.rounds + 1
    assert cost.comparison.outcome in OUTCOMES
    assert cost.every_change.label.startswith("snapshot after every change")



def test_publication_costs_takes_at_least_min_rounds_whatever_the_budget() -> None:
    (cost,) = publication_costs((200,), pairs=10, budget=0.001, min_rounds=15)
    assert cost.comparison.rounds >= 15, "a spent budget must not stop the rounds before min_rounds"
    assert MIN_PASSES >= 30, "the chapter's default must leave the bootstrap enough rounds"

def test_gap_direction_is_judged_from_the_intervals_not_the_points() -> None:
    def cost(every: float, spread: float) -> PublicationCost:
        a = Measurement.from_samples([every * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)], ops_per_call=10)
        b = Measurement.from_samples([1.0] * 5, ops_per_call=10)
        return PublicationCost(100, 10, 50, compare(a, b), 50, 1)

    assert gap_direction([cost(3.0, 0.01), cost(14.0, 0.01)]).startswith("verdict: the gap between the policies widens")
    assert "narrows" in gap_direction([cost(14.0, 0.01), cost(3.0, 0.01)])
    assert "a figure, not a verdict" in gap_direction([cost(3.0, 0.5), cost(3.3, 0.5)])
    near = gap_direction([cost(5.4, 0.01), cost(5.6, 0.01)])  # intervals apart, but inside the band: not judged
    assert not near.startswith("verdict:") and "a figure, not a verdict" in near
    with pytest.raises(ValueError):
        gap_direction([cost(3.0, 0.01)])


def test_snapshot_costs_measures_each_size() -> None:
    rows = snapshot_costs((100, 400), target=0.001)
    assert [r.resting for r in rows] == [100, 400]
    assert rows[0].levels < rows[1].levels
    assert all(r.time.median > 0 for r in rows)


def test_counting_sink_sorts_frames_by_topic() -> None:
    sink = CountingSink()
    sink.send_many([(b"book.snapshot.EDU", b""), (b"book.depth.EDU", b""), (b"trade.executed", b""), (b"order.ack.a", b"")])
    assert (sink.snapshots, sink.depth, sink.trades, sink.other) == (1, 1, 1, 1)
