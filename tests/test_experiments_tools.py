"""Readers for pstats, line_profiler, tracemalloc and dis output (chapter 02)."""

from __future__ import annotations

import cProfile
import pstats
import sys
import tracemalloc

import pytest

from edumatcher.chapters.the_standard_tools import tools
from edumatcher.workloads import standard, to_order


def _work(n: int) -> int:
    return sum(_square(i) for i in range(n))


def _square(i: int) -> int:
    return i * i


def _profile() -> pstats.Stats:
    prof = cProfile.Profile()
    prof.runcall(_work, 3_000)
    return pstats.Stats(prof)


def test_pstats_text_sorts_cuts_and_strips_directories_without_touching_the_original() -> None:
    stats = _profile()
    text = tools.pstats_text(stats, "tottime", 3)
    assert "Ordered by: internal time" in text and "_square" in text, text
    assert "test_experiments_tools.py" in text and "/tests/" not in text, "directories are stripped in the copy"
    assert any("/tests/" in key[0] or "\\tests\\" in key[0] for key in stats.stats), "the original keeps its paths"  # type: ignore[attr-defined]
    callers = tools.pstats_text(stats, callers_of="_square")
    assert "was called by" in callers and "<genexpr>" in callers, callers


def test_line_rows_orders_lines_by_share_and_finds_qualified_names(tmp_path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    a = 1\n    b = 2\n    return a + b\n")
    timings = {(str(source), 1, "Thing.f"): [(2, 10, 100), (3, 10, 300), (4, 10, 600)]}
    rows = tools.line_rows(timings, 1e-9, "f")
    assert [r.line for r in rows] == [4, 3, 2], "slowest line first"
    assert rows[0].share == pytest.approx(0.6) and rows[0].ns_per_hit == pytest.approx(60.0), rows[0]
    assert rows[0].source == "return a + b", "the source line is read back"
    assert "line" in str(tools.line_table(rows))
    with pytest.raises(KeyError):
        tools.line_rows(timings, 1e-9, "g")


def test_line_rows_reads_a_real_line_profiler_run() -> None:
    line_profiler = pytest.importorskip("line_profiler")
    lp = line_profiler.LineProfiler(_work)
    lp.enable_by_count()
    _work(500)
    lp.disable_by_count()
    stats = lp.get_stats()
    rows = tools.line_rows(stats.timings, stats.unit, "_work")
    assert rows and rows[0].hits >= 1 and "sum(" in rows[0].source, rows


def test_allocation_rows_are_per_message_and_biggest_first() -> None:
    tracemalloc.start()
    try:
        first = tracemalloc.take_snapshot()
        kept = [bytearray(1_000) for _ in range(10)]
        second = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    diff = second.compare_to(first, "lineno")
    rows = tools.allocation_rows(diff, 10)
    top = next(r for r in rows if "bytearray(1_000)" in r.source)
    assert top.bytes_per_message >= 1_000, f"each of 10 messages kept a 1,000-byte block: {top}"
    assert rows == sorted(rows, key=lambda r: r.bytes_per_message, reverse=True)
    assert len(kept) == 10
    with pytest.raises(ValueError):
        tools.allocation_rows(diff, 0)


def test_package_filters_keep_only_this_package() -> None:
    filters = tools.package_filters()
    assert all(f.inclusive for f in filters) and any("edumatcher" in f.filename_pattern for f in filters)


def _total_qty(order, n):  # type: ignore[no-untyped-def]
    total = 0
    for _ in range(n):
        total += order.qty
    return total


def test_specialisations_show_a_slot_read_after_warm_up() -> None:
    order = to_order(standard(1, seed=1)[0])
    _total_qty(order, 2_000)
    found = tools.specialisations(_total_qty)
    if sys.version_info < (3, 11):
        assert not found and not tools.ADAPTIVE_DIS, "no specialising interpreter before 3.11"
        return
    assert ("LOAD_ATTR", "LOAD_ATTR_SLOT") in found, f"a slotted attribute read specialises: {dict(found)}"
    assert all(not s.endswith(("_ADAPTIVE", "_QUICK")) for _, s in found), "only real specialisations count"
    assert "LOAD_ATTR_SLOT" in tools.dis_text(_total_qty, adaptive=True, only=("LOAD_ATTR",))


def test_dis_helpers_on_constant_folding_and_loops() -> None:
    def by_names(x: object, a: int = 1, b: int = 2) -> bool:
        return x in {a, b}

    def by_constants(x: object) -> bool:
        return x in {1, 2}

    assert "BUILD_SET" in tools.opnames(by_names) and tools.folded_frozensets(by_names) == []
    assert "BUILD_SET" not in tools.opnames(by_constants)
    assert tools.folded_frozensets(by_constants) == [frozenset({1, 2})], "a set of constants becomes one constant"
    assert "BUILD_SET" in tools.dis_text(by_names)
    assert tools.loop_loads(_total_qty)["LOAD_ATTR"] == 1, "one attribute read inside the loop"
    with pytest.raises(ValueError):
        tools.loop_loads(by_names)


def test_c_functions_fold_into_their_python_callers_as_py_spy_sees_them() -> None:
    from edumatcher.chapters.the_standard_tools.tools import compare_self_shares, profiler_self_shares

    handle, submit, get = ("/x/engine.py", 257, "handle"), ("/x/book.py", 418, "submit"), ("~", 0, "<method 'get'>")
    run_all = ("/nb.py", 1, "run_all")
    stats = {
        run_all: (1, 1, 0.5, 10.0, {}),
        handle: (10, 10, 1.0, 4.0, {run_all: (10, 10, 1.0, 4.0)}),
        submit: (10, 10, 1.0, 2.0, {handle: (10, 10, 1.0, 2.0)}),
        get: (30, 30, 2.0, 2.0, {handle: (20, 20, 1.0, 1.0), submit: (10, 10, 1.0, 1.0)}),
    }
    assert profiler_self_shares(stats, fold_c=False) == {"handle (engine.py:257)": 0.25, "submit (book.py:418)": 0.25,
                                                         "<method 'get'>": 0.5}
    assert profiler_self_shares(stats, fold_c=True) == {"handle (engine.py:257)": 0.5, "submit (book.py:418)": 0.5}
    folded = ["main (m.py:1);run_all (nb.py:1);Engine.handle (x/engine.py:257) 5",
              "main (m.py:1);run_all (nb.py:1);Engine.handle (x/engine.py:257);OrderBook.submit (x/book.py:418) 5",
              "main (m.py:1);run_all (nb.py:1);Engine.handle (x/engine.py:257);<lambda> (x/oop.py:9) 3",
              "main (m.py:1);idle (m.py:5) 7"]
    c = compare_self_shares(stats, folded)
    assert c.samples == 10 and c.sampled == {"handle (engine.py:257)": 0.5, "submit (book.py:418)": 0.5}
    assert c.apart_folded == 0.0 and c.apart_as_shown == pytest.approx(0.5)
    assert "structural" in c.sentence() and "folded in" in str(c.table())
