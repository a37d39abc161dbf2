"""The chapter 12 frame-memory experiment: three ways of building the same frames, traced."""

from __future__ import annotations

from edumatcher.chapters.beyond_heaps.frame_memory import VARIANTS, frame_memory, frame_memory_isolated, queue_verdict
from edumatcher.messages import ORJSON_CODEC, overallocates


def test_frame_memory_traces_each_variant_and_the_queue_it_fills() -> None:
    result = frame_memory(frames=2_000, max_bytes=100_000)
    rows = {row["variant"]: row for row in result["rows"]}
    assert list(rows) == list(VARIANTS)
    # The same payloads every way: identical len and sys.getsizeof.
    assert len({(r["len_bytes"], r["getsizeof_bytes"]) for r in rows.values()}) == 1
    for name in VARIANTS[1:]:  # right-sized and stdlib frames hold what they report
        assert rows[name]["traced_bytes"] <= 1.05 * rows[name]["getsizeof_bytes"], name
        assert rows[name]["queue_traced"] <= 2 * rows[name]["queue_counted"], name
    raw = rows[VARIANTS[0]]
    if ORJSON_CODEC is not None and overallocates(ORJSON_CODEC.dumps):
        assert raw["traced_bytes"] > 5 * raw["getsizeof_bytes"]
        assert raw["queue_traced"] > 5 * raw["queue_counted"]
        assert "as the codec returns them: holds far more than its bound" in queue_verdict(result)
    assert "right-sized copy: holds about its bound" in queue_verdict(result)


def test_queue_verdict_categories_are_far_apart() -> None:
    def result(ratio: float) -> dict:
        return {"rows": [{"variant": "v", "queue_counted": 100, "queue_traced": int(100 * ratio)}]}

    assert queue_verdict(result(1.9)).endswith("v: holds about its bound")
    assert queue_verdict(result(3)).endswith("v: unclear (between 2x and 5x)")
    assert queue_verdict(result(20)).endswith("v: holds far more than its bound (over 5x)")
    every = {"rows": [{"variant": v, "queue_counted": 100, "queue_traced": 300} for v in VARIANTS]}
    lines = f"verdict: {queue_verdict(every)}".split("\n")  # as the chapter prints it: one verdict line per variant
    assert len(lines) == len(VARIANTS) and all(line.startswith("verdict: ") and len(line) <= 160 for line in lines)


def test_the_isolated_run_returns_the_same_shape() -> None:
    result = frame_memory_isolated(frames=500, max_bytes=20_000)
    assert [row["variant"] for row in result["rows"]] == list(VARIANTS) and result["frames"] == 500
