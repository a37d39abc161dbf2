"""Chapter 09's bimodal benchmark: the configurations, the shared sinks, and what each run records."""

from __future__ import annotations

import gc

from edumatcher.experiments.bimodal import CONFIGS, MultipartKeepingSink, RunConfig, throughput_runs
from edumatcher.experiments.message_path import encode_workload
from edumatcher.sinks import DiscardingSink, KeepingSink
from edumatcher.workloads import steady_state


def test_multipart_sink_keeps_lists_the_collector_keeps_tracking() -> None:
    sink = MultipartKeepingSink()
    sink.send_many([(b"t", b"1"), (b"u", b"2")])
    sink.send(b"v", b"3")
    assert len(sink) == 3 and sink.frames[0] == [b"t", b"1"]
    gc.collect()
    assert gc.is_tracked(sink.frames[0])
    sink.clear()
    assert len(sink) == 0


def test_runs_are_recorded_per_configuration_and_shared_sinks_grow_then_empty() -> None:
    payloads = encode_workload(steady_state(150, seed=2))
    keeping = KeepingSink()
    configs = (
        RunConfig("keeping", lambda: keeping, True, True),
        RunConfig("discarding, collector off", DiscardingSink, False, False),
    )
    was_enabled = gc.isenabled()
    result = throughput_runs(payloads, runs=5, configs=configs)
    assert gc.isenabled() == was_enabled
    kept = [r.kept_frames for r in result.runs["keeping"]]
    assert kept == sorted(kept) and kept[0] > 0 and len(set(kept)) == 5, "one sink lives across all runs"
    assert len(keeping) == 0, "the shared sink is emptied afterwards"
    assert all(r.kept_frames == 0 and r.collections == 0 for r in result.runs["discarding, collector off"])
    m_keep, m_off = result.measurements
    assert m_keep.ops_per_call == 150 and m_keep.repeat == 5
    assert m_keep.gc_enabled and not m_off.gc_enabled


def test_default_configurations_cover_the_trap_and_the_controls() -> None:
    assert [c.collector for c in CONFIGS] == [True, True, True, False]
    assert CONFIGS[0].shared_sink and not CONFIGS[-1].shared_sink
