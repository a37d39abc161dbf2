"""Chapter 03's bimodal benchmark: the trap in a fresh process, its verdicts, and the older in-process replay."""

from __future__ import annotations

import gc

from edumatcher.chapters.measuring_honestly.bimodal import (
    CONFIGS,
    MultipartKeepingSink,
    RunConfig,
    TrapRun,
    TrapSample,
    bimodal_trap,
    split_summary,
    throughput_runs,
    trap_verdicts,
    trap_worker,
)
from edumatcher.kit.message_path import encode_workload
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


def _trap_run(cpu_ms: list[float], full: list[bool], *, collector: bool = True) -> TrapRun:
    # A run with a full collection spends all but 4 ms of its CPU time in its collections; others spend 1 ms.
    # With the collector off, no collection and no collection time.
    samples = [TrapSample(i, ms / 1e3, ms / 1e3, (3, 1, int(f)) if collector else (0, 0, 0),
                          (ms - 4.0 if f else 1.0) / 1e3 if collector else 0.0)
               for i, (ms, f) in enumerate(zip(cpu_ms, full, strict=True))]
    return TrapRun(collector, 1_000, 100, 5_000, "3.x", samples)


def test_trap_worker_counts_the_collections_inside_each_run() -> None:
    was = gc.isenabled()
    got = trap_worker(retained=20_000, frames=5_000, samples=6, warmup=1)
    assert gc.isenabled() == was
    assert got["tracked"] >= 20_000 and len(got["samples"]) == 6
    assert [s[0] for s in got["samples"]] == list(range(6))
    assert all(len(s[3]) == 3 and s[1] >= 0 and s[2] >= 0 and s[4] >= 0 for s in got["samples"])
    assert sum(s[3][0] for s in got["samples"]) > 0, "5,000 kept lists per run trigger young collections"
    off = trap_worker(retained=20_000, frames=5_000, samples=6, warmup=1, collector=False)
    assert gc.isenabled() == was
    assert all(s[3] == [0, 0, 0] for s in off["samples"]), "no collection runs with the collector off"


def test_bimodal_trap_runs_in_fresh_processes_and_the_full_collections_come() -> None:
    # Small enough for a test; big enough that promotions cross a quarter of the long-lived heap, and
    # that enough young collections run for a full one (3.13 starts them after 2,000 allocations, not 700).
    trap, control = bimodal_trap(retained=40_000, frames=50_000, samples=14, warmup=1)
    assert trap.collector and not control.collector and len(trap.samples) == len(control.samples) == 14
    assert any(s.full for s in trap.samples), "some run must contain a full collection"
    assert not any(sum(s.collections) for s in control.samples)
    assert trap.measurement().ops_per_call == 50_000 and not control.measurement().gc_enabled
    assert len(trap_verdicts(trap, control)) == 3


def test_trap_groups_and_verdicts_from_known_runs() -> None:
    full = [True, False, False] * 4
    run = _trap_run([50.0 if f else 5.0 + 0.1 * i for i, f in enumerate(full)], full)
    assert run.with_full is not None and run.with_full.repeat == 4 and run.without_full.repeat == 8
    assert run.separated and run.split is not None and run.split_is_the_collector
    control = _trap_run([4.0 + 0.01 * i for i in range(12)], [False] * 12, collector=False)
    control = TrapRun(False, 1_000, 100, 5_000, "3.x", [TrapSample(s.index, s.cpu, s.wall, (0, 0, 0), 0.0)
                                                       for s in control.samples])
    lines = trap_verdicts(run, control)
    assert all(line.startswith("verdict: ") for line in lines)
    assert "slower than" in lines[0] and "do not overlap" in lines[1] and "no run had a collection" in lines[2]
    assert "exactly the runs with a full collection" in split_summary(run)
    assert split_summary(control) == "bimodal_split finds no two clusters in these runs"


def test_trap_verdicts_say_when_the_trap_did_not_spring_or_the_groups_overlap() -> None:
    none = _trap_run([5.0] * 10, [False] * 10)
    assert trap_verdicts(none, none)[0].startswith("verdict: the trap did not spring: 0 of 10")
    mixed = _trap_run([5.0, 50.0, 5.0, 60.0, 55.0, 6.0], [True, True, False, True, True, False])
    assert not mixed.separated and "overlap: some run" in trap_verdicts(mixed, none)[1]
    assert not mixed.split_is_the_collector


def test_trap_runs_figure_draws_both_processes_on_one_axis() -> None:
    from edumatcher.chapters.measuring_honestly.figures import trap_runs

    full = [True, False, False] * 3
    fig = trap_runs(_trap_run([50.0 if f else 5.0 for f in full], full), _trap_run([4.0] * 9, [False] * 9, collector=False))
    left, right = fig.axes
    assert left.get_ylim() == right.get_ylim() and left.get_ylim()[0] == 0
    assert "collector on" in left.get_title() and "collector off" in right.get_title()
    left_labels = [t.get_text() for t in left.get_legend().get_texts()]
    right_labels = [t.get_text() for t in right.get_legend().get_texts()]
    assert any("a full one among them" in t for t in left_labels)
    assert not any("full one" in t or "young ones" in t for t in right_labels), "no collection bars on the control side"
    # Every run is one bar of its own work, and each run with a collection one more bar stacked on it.
    assert len(left.patches) == 9 + 9 and len(right.patches) == 9
    red = [p for p in left.patches if p.get_facecolor()[:3] == (0xc6 / 255, 0x28 / 255, 0x28 / 255)]
    assert len(red) == 3 and all(abs(p.get_y() - 4.0) < 1e-9 for p in red), "collections stacked on the 4 ms of work"


def test_cpu_outside_gc_is_the_run_minus_its_collections() -> None:
    s = TrapSample(0, 0.05, 0.06, (1, 0, 1), 0.045)
    assert abs(s.cpu_outside_gc - 0.005) < 1e-12 and s.full
