"""Chapter 05 and 06 experiments: construction, builders, ids, codecs, topics and clocks."""

from __future__ import annotations

import threading

import pytest

from edumatcher.chapters.construction_and_conversion.construction import (
    BUILDER_ARGS,
    QUOTED_RATIOS,
    depth_payload_without_coercion,
    direct_writer,
    measure_synthetic_from_dict,
    order_via_init,
    sample_order_dict,
)
from edumatcher.chapters.data_representation.slots import field_classes
from edumatcher.chapters.serialisation.serialisation import (
    ORJSON_CODEC,
    STDLIB_CODEC,
    Saving,
    frames_per_message,
    gain_order,
    macro_and_micro_savings,
    macro_micro_verdict,
    measure_codecs,
    measure_topics,
    payload_with_keys,
    realistic_order_payload,
    totals_line,
)
from edumatcher.chapters.serialisation.timestamps import StrictClock, measure_clocks, repeats_in
from edumatcher.kit import Comparison
from edumatcher.messages import make_book_depth, make_book_depth_unchecked, make_order_new, make_order_new_unchecked
from edumatcher.model import Order

FAST = 0.001


def test_order_via_init_builds_what_from_dict_builds() -> None:
    for extra in ({}, {"smp": "CANCEL_BOTH", "display_qty": 10, "status": "PARTIALLY_FILLED", "remaining_qty": 5}):
        d = {**sample_order_dict(), **extra}
        assert order_via_init(d).to_dict() == Order.from_dict(d).to_dict()


def test_direct_writer_matches_the_generated_init() -> None:
    _, slotted = field_classes(7)
    d = {f"f{i}": i * 3 for i in range(7)}
    assert direct_writer(slotted)(d) == slotted(**d)
    assert direct_writer(slotted).__source__.count("o.f") == 7


def test_the_synthetic_pair_is_an_interleaved_comparison_with_labels() -> None:
    comparison = measure_synthetic_from_dict(3, budget=0.05, target=FAST)
    assert isinstance(comparison, Comparison) and comparison.paired and comparison.rounds >= 12
    a, b = comparison
    assert a.label == "S(**d), 3 fields, wire keys" and b.label == "__new__ + 3 slot writes, wire keys"
    assert a.median > 0 and b.median > 0


def test_quoted_ratios_are_the_seeds_times_without_over_with() -> None:
    assert QUOTED_RATIOS["uuid4 / urandom.hex"] == pytest.approx(1218 / 170)
    assert all(ratio > 1 for ratio in QUOTED_RATIOS.values()), "the Python engine notes quotes every technique as a gain"


def test_the_builders_compared_agree_on_bytes() -> None:
    assert make_order_new(*BUILDER_ARGS) == make_order_new_unchecked(*BUILDER_ARGS)


def test_dropping_the_coercion_changes_the_bytes_only_for_an_int() -> None:
    args = ("EDU", 300, 0, 1, 1_000)
    assert make_book_depth_unchecked(*args) == make_book_depth(*args)
    assert depth_payload_without_coercion(*args) != make_book_depth(*args)
    assert depth_payload_without_coercion("EDU", 300, 0, 0.5, 1_000, "100.00") == make_book_depth("EDU", 300, 0, 0.5, 1_000, "100.00")


def test_codecs_agree_and_are_measured() -> None:
    for payload in (realistic_order_payload(), payload_with_keys(50)):
        assert STDLIB_CODEC.dumps(payload) == ORJSON_CODEC.dumps(payload)
    figures = measure_codecs(budget=0.05, target=FAST)
    assert len(figures.all()) == 4 and figures.dumps_ratio > 0 and figures.loads_ratio > 0
    assert figures.encode.paired and figures.decode.rounds >= 12
    assert (figures.json_dumps, figures.orjson_dumps) == tuple(figures.encode)
    line = gain_order(figures.encode, figures.decode)
    assert line.startswith("verdict: ") and "encode" in line and "decode" in line
    with pytest.raises(ValueError):
        payload_with_keys(0)


def test_topics_and_frames() -> None:
    comparison = measure_topics(budget=0.05, target=FAST)
    built, cached = comparison
    assert "f\"order.ack" in built.label and "TopicCache" in cached.label
    assert comparison.paired and comparison.rounds >= 12
    from edumatcher.kit.message_path import encode_workload
    from edumatcher.workloads import steady_state

    assert frames_per_message(encode_workload(steady_state(200, seed=1))) >= 1.0
    assert frames_per_message([]) == 0.0


def test_macro_and_micro_savings_scale_by_use_per_message() -> None:
    from edumatcher.chapters.serialisation.serialisation import engine_uses
    from edumatcher.kit.message_path import encode_workload
    from edumatcher.workloads import steady_state

    payloads = encode_workload(steady_state(100, seed=1))
    uses = engine_uses(payloads)
    savings = macro_and_micro_savings(payloads, budget=0.02, target=FAST)
    by_label = {s.label: s for s in savings}
    encodes = by_label["orjson instead of json: encodes"]
    assert encodes.uses_per_message == frames_per_message(payloads)
    assert encodes.seconds == pytest.approx((encodes.slow.median - encodes.fast.median) * encodes.uses_per_message)
    assert by_label["orjson instead of json: decode"].uses_per_message == 1
    # Per new order, not per message: a cancel builds no Order. The engine mints no ids.
    assert by_label["enum lookup tables (5 fields)"].uses_per_message == pytest.approx(5 * uses.orders_built / len(payloads))
    assert 0 < uses.orders_built < len(payloads) and 0 < uses.owner_topic_frames <= uses.frames
    assert not any("id" in s.label.split() or "urandom" in s.label for s in savings)
    for s in savings:
        assert s.comparison is not None and (s.slow, s.fast) == tuple(s.comparison)
        low, high = s.bounds
        assert low <= high
    assert macro_micro_verdict(savings).startswith("verdict: ")
    assert not totals_line(savings).startswith("verdict")


def _saving(label: str, slow: float, fast: float, uses: float = 1) -> Saving:
    from edumatcher.kit import Measurement, compare

    a = Measurement.from_samples([slow * f for f in (0.99, 1.0, 1.01, 1.0, 0.995, 1.005)])
    b = Measurement.from_samples([fast * f for f in (0.99, 1.0, 1.01, 1.0, 0.995, 1.005)])
    return Saving(label, a, b, uses, compare(a, b))


def test_macro_micro_verdict_is_worded_from_the_bounds() -> None:
    codec = _saving("orjson instead of json: encodes", 3e-6, 3e-7, 2)
    small = [_saving("ids", 2e-6, 4e-7), _saving("enum", 6e-7, 3e-8, 5)]
    assert "saves more per message than any one" in macro_micro_verdict([codec, *small])
    assert "one micro-optimisation saves more" in macro_micro_verdict([codec, _saving("ids", 2e-5, 1e-7)])
    close = macro_micro_verdict([codec, _saving("ids", 5.7e-6, 3e-7)])
    assert "cannot be told apart" in close
    assert len(close.splitlines()[0]) <= 160 and close.splitlines()[1].startswith("    codec ")
    with pytest.raises(ValueError):
        macro_micro_verdict(small)


def test_strict_clock_never_repeats_even_across_threads() -> None:
    clock = StrictClock(lambda: 100)  # a source stuck on one value
    stamps: list[int] = []

    def take() -> None:
        for _ in range(500):
            stamps.append(clock.now())

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(stamps) == list(range(100, 2100))


def test_strict_clock_follows_a_moving_source_and_counts_repeats() -> None:
    readings = iter([5, 9, 9, 12])
    clock = StrictClock(lambda: next(readings))
    assert [clock.now() for _ in range(4)] == [5, 9, 10, 12]
    values = iter([1, 1, 2, 2, 2, 3])
    assert repeats_in(6, lambda: next(values)) == 3
    plain, strict = measure_clocks(budget=0.05, target=FAST)
    assert "StrictClock" in strict.label and "monotonic_ns" in plain.label
