"""Chapter 06's snapshot experiments: the replayable stream, the counting sink, both publication policies."""

from __future__ import annotations

from edumatcher.experiments.snapshots import (
    CountingSink,
    price_levels,
    publication_costs,
    ramped_engine,
    snapshot_costs,
    trade_pairs,
)
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
    (cost,) = publication_costs((200,), pairs=50)
    assert cost.snapshots_every_change == cost.messages  # every message changed the book
    # 1 ms of market time per message and a 100 ms interval: about one snapshot per 100 messages.
    assert 0 < cost.snapshots_throttled <= cost.messages // 100 + 5
    assert cost.every_change.ops_per_call == 100 and cost.throttled.ops_per_call == 100


def test_snapshot_costs_measures_each_size() -> None:
    rows = snapshot_costs((100, 400), target=0.001)
    assert [r.resting for r in rows] == [100, 400]
    assert rows[0].levels < rows[1].levels
    assert all(r.time.median > 0 for r in rows)


def test_counting_sink_sorts_frames_by_topic() -> None:
    sink = CountingSink()
    sink.send_many([(b"book.snapshot.EDU", b""), (b"book.depth.EDU", b""), (b"trade.executed", b""), (b"order.ack.a", b"")])
    assert (sink.snapshots, sink.depth, sink.trades, sink.other) == (1, 1, 1, 1)
