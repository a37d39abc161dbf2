"""The message-path experiments: payload encoding, per-message latency, decode vs handle, profiling."""

from __future__ import annotations

import pytest

from edumatcher.chapters.where_the_time_goes.profiling import (
    ONE_PERCENT,
    ProfileReport,
    ProfileRow,
    function_label,
    profile_beside_seed,
    profile_message_path,
)
from edumatcher.kit.message_path import (
    compare_decode_and_handle,
    decode_and_handle,
    encode_workload,
    fresh_engine,
    handling_latencies,
    summarise_latencies,
)
from edumatcher.messages import loads
from edumatcher.workloads import steady_state


def test_encode_workload_writes_what_the_engine_accepts() -> None:
    ops = steady_state(300, seed=3, depth=50)
    payloads = encode_workload(ops)
    assert len(payloads) == len(ops)
    engine = fresh_engine()
    for op, payload in zip(ops, payloads, strict=True):
        msg = loads(payload)
        assert msg["type"] == {"new": "order.new", "cancel": "order.cancel", "cancel_owner": "order.cancel_owner"}[op[0]]
        frames = engine.handle(payload)
        # A cancel of an order the book already filled is refused (UNKNOWN_ORDER); nothing else may be.
        for topic, body in frames:
            if topic.startswith(b"order.reject"):
                assert op[0] == "cancel" and loads(body)["reason"] == "UNKNOWN_ORDER"


def test_encode_workload_prices_are_decimal_strings_and_cancels_name_the_owner() -> None:
    new, cancel = encode_workload([("new", "o1", "SELL", "LIMIT", "GTC", 10_005, 3, "ben"), ("cancel", "o1")])
    assert loads(new)["price"] == "100.05"
    assert loads(cancel) == {"type": "order.cancel", "id": "o1", "symbol": "EDU", "owner": "ben"}
    with pytest.raises(ValueError, match="unknown operation"):
        encode_workload([("modify", "o1")])


def test_handling_latencies_times_every_message_with_the_given_clock() -> None:
    ticks = iter(range(0, 10_000, 5))
    payloads = encode_workload(steady_state(20, seed=1))
    latencies = handling_latencies(payloads, clock=lambda: next(ticks))
    assert latencies == [5] * 20


def test_summarise_latencies_uses_nearest_rank() -> None:
    s = summarise_latencies(list(range(1, 1001)))
    assert (s.count, s.p50, s.p99, s.p999, s.max, s.total) == (1000, 500, 990, 999, 1000, 500500)
    assert s.throughput == pytest.approx(1000 / (500500 / 1e9))


def test_decode_and_handle_measures_both_legs_per_message() -> None:
    payloads = encode_workload(steady_state(200, seed=2))
    decode, handle = decode_and_handle(payloads)
    assert decode.ops_per_call == handle.ops_per_call == 200
    assert decode.repeat == handle.repeat == 5
    assert "decode" in decode.label and "handle" in handle.label


def test_compare_decode_and_handle_pairs_the_same_passes_adaptively() -> None:
    payloads = encode_workload(steady_state(100, seed=2))
    comparison = compare_decode_and_handle(payloads, budget=0.05)
    handle, decode = comparison
    assert "handle" in handle.label and "decode" in decode.label
    assert handle.ops_per_call == decode.ops_per_call == 100
    assert comparison.paired and comparison.rounds >= 12 and comparison.outcome in ("slower", "faster", "same", "undetermined")


def test_function_label_names_files_builtins_and_generated_code() -> None:
    assert function_label(("/a/b/engine.py", 7, "handle")) == "engine.py:7 handle"
    assert function_label(("~", 0, "<built-in method len>")) == "<built-in method len>"
    assert function_label(("<edumatcher.messages order.new orjson>", 3, "check_order_new")).startswith("messages (generated)")


def test_profile_rows_are_sorted_shares_that_sum_to_one() -> None:
    report = profile_message_path(encode_workload(steady_state(300, seed=1)))
    shares = [r.own_share for r in report.rows]
    assert shares == sorted(shares, reverse=True)
    assert sum(shares) == pytest.approx(1.0)
    assert not any("_run_all" in r.function for r in report.rows), "the driver loop is not the engine"
    assert any("handle" in r.function for r in report.rows)
    assert len(report.top(5).rows) == 5
    assert all(r.own_share >= ONE_PERCENT for r in report.above())
    assert "<table>" in report._repr_html_() and "own share" in str(report)


def _report(*shares: float) -> ProfileReport:
    rows = tuple(ProfileRow(f"f{i}", 1, 1.0, s, s, s) for i, s in enumerate(shares))
    return ProfileReport(rows, 1.0, 1)


def test_dominance_sentence_follows_the_numbers() -> None:
    assert _report(0.6, 0.4).dominance_sentence().startswith("One function dominates")
    assert _report(0.3, 0.3, 0.3, 0.1).dominance_sentence().startswith("No single function dominates")
    assert "4 functions" in _report(0.3, 0.3, 0.3, 0.1).dominance_sentence()


def test_profile_beside_seed_pairs_every_quoted_row_with_ours_or_says_none() -> None:
    table = profile_beside_seed(_report(0.5, 0.5))
    sources = [row[1] for row in table.rows]
    assert sources[0::2] == ["quoted: Python engine notes, CPython 3.14.10"] * (len(sources) // 2)
    assert all(s.startswith("measured here") for s in sources[1::2])
    assert any("no counterpart" in row[0] for row in table.rows)


def test_the_harness_clock_is_left_out_by_module_and_function_and_other_lambdas_stay() -> None:
    import cProfile
    import pstats

    from edumatcher.chapters.where_the_time_goes.profiling import (
        HARNESS_FRAMES,
        is_harness,
        report_from_stats,
        without_harness,
    )

    payloads = encode_workload(steady_state(200, seed=1))
    engine = fresh_engine()
    other = lambda: 1  # noqa: E731 - a lambda that is not the harness's
    profiler = cProfile.Profile()
    profiler.enable()
    for p in payloads:
        engine.handle(p)
        other()
    profiler.disable()
    stats = pstats.Stats(profiler)
    lambdas = [key for key in stats.stats if key[2] == "<lambda>"]  # type: ignore[attr-defined]
    clock = [key for key in lambdas if key in HARNESS_FRAMES]
    assert len(clock) == 1 and stats.stats[clock[0]][0] == len(payloads), "the engine reads its clock once a message"  # type: ignore[attr-defined]
    assert any(not is_harness(key) for key in lambdas), "a lambda of another module is not the harness"
    names = [row.function for row in report_from_stats(stats, len(payloads)).rows]
    assert not any(name.startswith("message_path.py") for name in names), names
    assert any(name.endswith(" <lambda>") for name in names), "the test's own lambda stays in the report"
    kept = without_harness(stats.stats, also=("handle",))  # type: ignore[attr-defined]
    assert clock[0] not in kept and not any(key[2] == "handle" for key in kept)
    assert any(key[2] == "<lambda>" for key in kept)
