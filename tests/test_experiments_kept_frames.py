"""Chapter 03's kept-frames experiment: sinks, the worker's figures, the verdicts (never a speed)."""

from __future__ import annotations

import gc

from edumatcher.chapters.measuring_honestly.kept_frames import (
    MODES,
    KeptFrames,
    kept_frames,
    kept_frames_verdicts,
    kept_frames_worker,
    page_faults,
    rss_bytes,
)
from edumatcher.kit import compare


def test_two_sinks_discard_and_keep() -> None:
    assert MODES == ("discard", "keep")


def test_process_figures_are_readable() -> None:
    assert rss_bytes() > 0
    assert page_faults() >= -1


def test_worker_runs_every_mode_in_rounds_with_the_collector_off_and_restores_it() -> None:
    was = gc.isenabled()
    row = kept_frames_worker(runs=3, messages=60, warmup=1)
    assert gc.isenabled() == was
    assert sorted(row["runs"]) == sorted(MODES)
    for mode, runs in row["runs"].items():
        assert len(runs["cpu"]) == len(runs["faults"]) == len(runs["rss"]) == len(runs["frames"]) == 3, mode
        assert all(n > 60 for n in runs["frames"]), "every message causes at least one frame"
    assert row["runs"]["keep"]["frames"] == row["runs"]["discard"]["frames"], "every mode handles the same payloads"
    assert row["payload_bytes"] > 0


def _result(keep_ms: float, keep_faults: int) -> dict[str, KeptFrames]:
    def kf(mode: str, ms: float, faults: int, per_frame: int) -> KeptFrames:
        # Rounds taken side by side (one interleave id), 8 runs of 100 messages, 150 frames each.
        return KeptFrames(mode, "3.x", 100, [ms / 1e3 * (1 + 0.01 * i) for i in range(8)], [faults] * 8,
                          [150 * per_frame] * 8, [150] * 8, 120.0, 7)
    return {"discard": kf("discard", 10.0, 0, 0), "keep": kf("keep", keep_ms, keep_faults, 4096)}


def test_verdicts_follow_the_figures() -> None:
    comparison, lines = kept_frames_verdicts(_result(17.0, 2_000))
    # The time is a figure (near the band, it would flip between runs); the page faults are the verdict.
    assert comparison.outcome == "slower" and not lines[0].startswith("verdict") and lines[1].startswith("verdict: ")
    assert "collector off in both" in lines[0] and lines[0].count("not a verdict") == 1
    assert "touched more fresh memory" in lines[1]
    comparison, lines = kept_frames_verdicts(_result(10.0, 0))
    assert comparison.outcome == "same" and "touched no more fresh memory" in lines[1]


def test_kept_frame_properties() -> None:
    r = _result(17.0, 2_000)
    assert r["discard"].kept == 0 and r["discard"].rss_per_kept_frame == 0.0
    assert r["keep"].kept == 8 * 150 and r["keep"].rss_per_kept_frame == 4096
    assert r["keep"].measurement.ops_per_call == 100 and not r["keep"].measurement.gc_enabled
    assert compare(r["keep"].measurement, r["discard"].measurement).paired, "rounds side by side are compared in pairs"


def test_kept_frames_runs_every_mode_in_one_fresh_process() -> None:
    result = kept_frames(runs=2, messages=50, warmup=0)
    assert list(result) == list(MODES)
    assert result["discard"].kept == 0 and result["keep"].kept > 0
    assert len({k.interleave_id for k in result.values()}) == 1
