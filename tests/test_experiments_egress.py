"""The egress overload: the byte cap holds, the entry cap's memory follows the payloads."""

from __future__ import annotations

import pytest

from edumatcher.bounded_queue import held_bytes
from edumatcher.chapters.beyond_heaps.egress import (
    SLOT_BYTES,
    EntryBoundedQueue,
    frame_scaling,
    payload_sizes,
    scaling_verdict,
    simulate,
)


def test_entry_bounded_queue_sheds_when_full_and_tracks_bytes() -> None:
    q = EntryBoundedQueue(2)
    assert q.put(b"aa") and q.put(b"bbb") and not q.put(b"c")
    cost = [held_bytes(p) + SLOT_BYTES for p in (b"aa", b"bbb", b"c")]  # counted as real memory
    assert (len(q), q.bytes, q.shed_items, q.shed_bytes) == (2, cost[0] + cost[1], 1, cost[2])
    assert q.get() == b"aa" and q.bytes == cost[1]
    with pytest.raises(ValueError):
        EntryBoundedQueue(0)


def test_payload_sizes_are_seeded_and_within_bounds() -> None:
    sizes = payload_sizes(2_000, 5_000, seed=3)
    assert sizes == payload_sizes(2_000, 5_000, seed=3)
    assert 64 <= min(sizes) and max(sizes) <= 5_000
    with pytest.raises(ValueError):
        payload_sizes(1, 10)


def test_byte_cap_holds_and_the_entry_cap_follows_payload_size() -> None:
    small = simulate(ticks=80, max_payload=1_024, max_entries=500, max_bytes=1 << 20)
    large = simulate(ticks=80, max_payload=32_768, max_entries=500, max_bytes=1 << 20)
    for trace in (small, large):
        assert max(trace.byte_bounded) <= 1 << 20
        assert trace.byte_queue.put_items + trace.byte_queue.shed_items == trace.offered
        assert trace.entry_queue.shed_items > 0  # the producer outruns the consumer
    assert max(large.entry_bounded) > 4 * max(small.entry_bounded)
    assert max(large.entry_bounded) > 1 << 20, "an entry cap with large payloads exceeds the byte budget"
    assert large.byte_queue.shed_items > 0


def test_entry_bounded_queue_drains_oldest_first() -> None:
    q = EntryBoundedQueue(5)
    for p in (b"a", b"bb", b"ccc"):
        q.put(p)
    assert q.drain(2) == [b"a", b"bb"] and q.drain() == [b"ccc"] and q.bytes == 0 and q.drain(3) == []


def test_traced_runs_measure_each_queue_alone_and_match_the_untraced_run() -> None:
    plain = simulate(ticks=60, max_payload=8_192, max_entries=300, max_bytes=200_000)
    traced = simulate(ticks=60, max_payload=8_192, max_entries=300, max_bytes=200_000, traced=True)
    assert plain.entry_bounded == traced.entry_bounded and plain.byte_bounded == traced.byte_bounded
    assert plain.entry_traced_peak == plain.byte_traced_peak == 0
    # tracemalloc sees at least the frames held after a tick (its peak comes mid-tick, before the consumer runs)
    assert max(traced.entry_bounded) <= traced.entry_traced_peak < 1.5 * max(traced.entry_bounded) + 100_000
    # The byte cap counts real memory: what tracemalloc saw is the cap plus at most the frame on
    # offer and the deque's block links.
    assert max(traced.byte_bounded) <= traced.byte_traced_peak < 1.05 * (200_000 + 8_192)
    assert traced.mean_payload == traced.offered_bytes / traced.offered


def test_frame_scaling_and_its_verdict_follow_the_frames() -> None:
    traces = frame_scaling((1_024, 32_768), ticks=60, max_entries=300, max_bytes=200_000)
    assert [t.max_payload for t in traces] == [1_024, 32_768]
    line = scaling_verdict(traces)
    assert line.startswith("verdict: the entry-capped queue's peak rose with the frames")
    assert "stayed within its" in line
    verdicts = [v for v in line.splitlines() if v.startswith("verdict: ")]
    assert len(verdicts) == 2 and all(len(v) <= 160 for v in verdicts)
    flat = [simulate(ticks=60, max_payload=1_024, max_entries=300, max_bytes=200_000, traced=True)] * 2
    assert "did not rise at every step" in scaling_verdict(flat)
    with pytest.raises(ValueError):
        scaling_verdict(traces[:1])


def test_scaling_figure_has_a_time_panel_and_a_peak_panel() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from edumatcher.chapters.beyond_heaps.figures import egress_scaling_figure

    traces = frame_scaling((1_024, 32_768), ticks=40, max_entries=200, max_bytes=100_000)
    fig = egress_scaling_figure(traces)
    assert len(fig.axes) == 2 and fig.axes[1].get_xscale() == "log"
    assert "tracemalloc" in fig.axes[1].get_ylabel()
    with pytest.raises(ValueError):
        egress_scaling_figure([simulate(ticks=5, max_payload=1_024)])


def test_frame_scaling_in_a_fresh_process_brings_back_the_same_traces() -> None:
    from edumatcher.chapters.beyond_heaps.egress import EgressTrace, frame_scaling_isolated

    kwargs = {"ticks": 30, "max_entries": 100, "max_bytes": 50_000}
    isolated, here = frame_scaling_isolated((1_024, 8_192), **kwargs), frame_scaling((1_024, 8_192), **kwargs)
    for a, b in zip(isolated, here, strict=True):
        assert isinstance(a, EgressTrace) and a.entry_bounded == b.entry_bounded and a.byte_bounded == b.byte_bounded
        assert a.byte_queue.stats() == b.byte_queue.stats() and a.entry_queue.shed_items == b.entry_queue.shed_items
        assert a.entry_traced_peak > 0 and a.byte_traced_peak > 0


def test_the_byte_cap_bounds_real_memory_even_for_small_frames() -> None:
    # Frames of 64-256 bytes: headers and the queue's records are most of what is held,
    # so a cap counted by len() would hold about twice its bound here.
    trace = simulate(ticks=60, max_payload=256, max_entries=50_000, max_bytes=100_000, traced=True)
    assert trace.byte_queue.shed_items > 0
    assert trace.byte_traced_peak <= 1.05 * (100_000 + 256), trace.byte_traced_peak
    assert "stayed within its" in scaling_verdict([trace, trace]).splitlines()[2]
