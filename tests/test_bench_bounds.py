"""``bench bounds``: wires issues 15 and 26's rows to the CLI and reports the default queue count against tracemalloc."""

from __future__ import annotations

import re

import pytest

from edumatcher.benchmarks import book_bounds, bounds_bench
from edumatcher.cli import main


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Small frame counts; the book rows are tests/test_book_bounds*'s subject, so only their calls are recorded."""
    calls: list[bool] = []
    monkeypatch.setattr(bounds_bench, "QUICK_FRAMES", (3_000, 200_000))
    monkeypatch.setattr(book_bounds, "run_issue_26", lambda *, quick=False, say=print: calls.append(quick))
    monkeypatch.setattr(book_bounds, "run_issue_15", lambda *, quick=False, say=print: calls.append(quick))
    return calls


def test_bench_bounds_quick_prints_four_parts_and_the_queue_holds_its_cap(small: list[bool], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "bounds", "--quick"]) == 0
    out = capsys.readouterr().out
    assert small == [True, True], "the book's rows run, quick"
    assert out.index("[1/4]") < out.index("[2/4]") < out.index("[3/4]") < out.index("[4/4]")
    assert "verdict: a queue bounded by len(), " in out
    # The default ByteBoundedQueue counts real memory: tracemalloc sees no more than its cap (+5 %).
    assert "verdict: the default count bounds what the queue holds" in out, out
    counted, traced = map(float, re.search(r"the queue counts ([\d.]+) MB, tracemalloc sees ([\d.]+) MB", out).groups())  # type: ignore[union-attr]
    assert counted <= 0.2 and traced <= 1.05 * 0.2


def test_bench_bounds_refuses_repeat_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "bounds", "--quick", "--repeat", "5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: bench bounds takes no --repeat") and err.count("\n") == 1
