"""Chapter 12's compile experiment: three forms of the sweep agree; the build degrades to a reason, never a crash."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import random  # noqa: E402
from array import array  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from edumatcher.chapters.beyond_heaps import compiled  # noqa: E402
from edumatcher.chapters.beyond_heaps.compiled import (  # noqa: E402
    PYTHON,
    Build,
    build_sweep,
    compiler_missing,
    sweep_book,
    sweep_numpy,
    sweep_python,
    sweep_results_table,
    sweep_verdicts,
)
from edumatcher.chapters.beyond_heaps.figures import sweep_figure  # noqa: E402
from edumatcher.kit import Measurement, compare  # noqa: E402


def _naive_sweep(qty: list[int], best: int, want: int, low: int) -> tuple[int, int, int]:
    """Lot by lot: the slowest obvious reading of "fill want lots, best level first"."""
    filled = cost = 0
    last = best - 1
    for i in range(best, len(qty)):
        if filled == want:
            break
        for _ in range(qty[i]):
            if filled == want:
                break
            filled += 1
            cost += low + i
            last = i
    scanned = (last - best + 1) if filled == want else len(qty) - best
    return filled, cost, max(scanned, 0)


def _cases(count: int) -> list[tuple[list[int], int, int, int]]:
    rnd = random.Random(13)
    cases = []
    for _ in range(count):
        n = rnd.randint(1, 30)
        qty = [rnd.choice((0, 0, rnd.randint(1, 9))) for _ in range(n)]
        cases.append((qty, rnd.randrange(n), rnd.randint(1, 60), rnd.randint(0, 10_000)))
    return cases


def test_python_and_numpy_sweeps_agree_with_a_lot_by_lot_model() -> None:
    for qty, best, want, low in _cases(400):
        expected = _naive_sweep(qty, best, want, low)
        assert sweep_python(qty, best, want, low) == expected, (qty, best, want, low)
        assert sweep_numpy(np.array(qty, dtype=np.int64), best, want, low) == expected, (qty, best, want, low)


def test_nothing_wanted_or_nothing_there_fills_nothing() -> None:
    assert sweep_python([5], 0, 0, 1) == sweep_numpy(np.array([5]), 0, 0, 1) == (0, 0, 0)
    assert sweep_python([0, 0], 0, 3, 1) == sweep_numpy(np.array([0, 0]), 0, 3, 1) == (0, 0, 2)


def test_sweep_book_holds_one_side_three_ways_and_sizes_orders_by_levels() -> None:
    book = sweep_book(64)
    assert book.as_list == book.as_array.tolist() == book.as_numpy.tolist() and min(book.as_list) >= 1
    book.as_array[0] += 1  # the NumPy array is a view of the array's buffer, not a copy
    assert book.as_numpy[0] == book.as_array[0]
    assert sweep_python(book.as_list, 0, book.want(10), book.low)[2] == 10
    with pytest.raises(ValueError):
        book.want(65)
    with pytest.raises(ValueError):
        sweep_book(0)


def test_the_compiled_sweep_agrees_where_it_builds() -> None:
    build = build_sweep()
    if build.sweep is None:
        assert build.reason.startswith("skipped: "), build.reason
        pytest.skip(build.reason)
    assert build.seconds > 0 and "Cython" in build.tools
    assert build_sweep() is build, "a second build in one process is the cached first one"
    for qty, best, want, low in _cases(200):
        expected = sweep_python(qty, best, want, low)
        assert build.sweep(array("q", qty), best, want, low) == expected
        assert build.sweep(np.array(qty, dtype=np.int64), best, want, low) == expected
    with pytest.raises(TypeError):
        build.sweep(array("i", [1, 2]), 0, 1, 0)  # 4-byte ints are not the int64 the loop reads


def test_a_build_is_kept_on_disk_with_its_time_and_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if compiler_missing():
        pytest.skip(compiler_missing())
    monkeypatch.setattr(compiled, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled, "_BUILDS", {})
    source = compiled.SWEEP_PYX + "\n# a source of this test's own, so no other build is reused\n"
    first = build_sweep(source)
    assert first.sweep is not None and not first.reused and first.path.startswith(str(tmp_path)), first
    assert "compiled in" in first.describe()
    monkeypatch.setattr(compiled, "_BUILDS", {})  # as a new process would start
    again = build_sweep(source)
    assert again.reused and again.seconds == pytest.approx(first.seconds) and again.path == first.path
    assert "reused an earlier run's build" in again.describe()
    assert again.sweep(array("q", [1, 2]), 0, 3, 0) == (3, 2, 2)
    with open(first.path + ".json", "w", encoding="utf-8") as file:
        file.write("not json")  # a damaged record is rebuilt, not trusted
    monkeypatch.setattr(compiled, "_BUILDS", {})
    assert not build_sweep(source).reused


def test_a_failed_build_is_a_reason_not_an_exception() -> None:
    if compiler_missing():
        pytest.skip(compiler_missing())
    build = build_sweep("def sweep(:\n    pass\n", cache=False)
    assert build.sweep is None and build.reason.startswith("skipped: the build failed"), build.reason


def test_a_missing_compiler_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/edumatcher-cc")
    assert "no C compiler" in compiler_missing()
    assert build_sweep("def sweep(): pass\n", cache=False) == Build(None, reason=f"skipped: {compiler_missing()}")
    monkeypatch.setattr(compiled.importlib.util, "find_spec", lambda name: None)
    assert "Cython is not installed" in compiler_missing()


def _m(seconds: float, label: str) -> Measurement:
    return Measurement.from_samples([seconds * k for k in (1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97)],
                                    label=label)


def _synthetic() -> dict[int, dict[str, object]]:
    """NumPy: slower at 4 levels, faster at 4,096; Cython: faster at both ends."""
    python = {4: 1e-6, 64: 1e-5, 4_096: 1e-3}
    numpy = {4: 1e-5, 64: 1.2e-5, 4_096: 2e-5}
    cython = {4: 2e-7, 64: 3e-7, 4_096: 1e-5}
    return {k: {"NumPy": compare(_m(numpy[k], f"NumPy ({k})"), _m(python[k], f"Python ({k})")),
                "Cython": compare(_m(cython[k], f"Cython ({k})"), _m(python[k], f"Python ({k})"))}
            for k in python}


def test_verdicts_judge_the_two_ends_and_where_the_advantage_turns() -> None:
    lines = sweep_verdicts(_synthetic())  # type: ignore[arg-type]
    assert all(line.startswith("verdict: ") for line in lines) and len(lines) == 2 * 2 + 2
    assert "NumPy (4) is" in lines[0] and "slower" in lines[0] and "faster" in lines[2]
    assert "NumPy: slower than the Python loop at 4 levels swept, faster at 4,096" in lines[4]
    assert "Cython: faster than the Python loop at both ends" in lines[5]
    table = str(sweep_results_table(_synthetic()))  # type: ignore[arg-type]
    assert PYTHON in table and table.count("measured here") == 3
    with pytest.raises(ValueError):
        sweep_verdicts({})


def test_sweep_figure_draws_the_baseline_and_each_form() -> None:
    fig = sweep_figure(_synthetic())  # type: ignore[arg-type]
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [PYTHON, "NumPy", "Cython"] and ax.get_xscale() == ax.get_yscale() == "log"
    with pytest.raises(ValueError):
        sweep_figure({})
