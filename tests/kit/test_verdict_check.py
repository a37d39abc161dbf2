"""``python -m edumatcher check-verdicts``: the normaliser, the comparison of runs, and real runs of fixtures.

The fixture notebooks in ``tests/fixtures/verdicts/`` are tiny, so each run is a kernel start and
a few prints: ``stable`` prints random numbers in fixed words, ``unstable`` flips between
"faster" and "slower" through a counter file in its folder (so the tests run copies in a
temporary folder), ``raises`` fails in its second cell, ``sleeps`` outlives a short timeout.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from nbformat import writes as nbformat_dumps

from edumatcher.cli import main
from edumatcher.kit import verdict_check
from edumatcher.kit.verdict_check import (
    ChapterResult,
    Run,
    Verdict,
    check_chapter,
    find_chapters,
    format_chapter,
    normalise,
    record_of,
    run_notebook,
    verdict_lines,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "verdicts"


@pytest.mark.parametrize(("line", "expected"), [
    ("verdict: a is 2.31x slower than b (95 % CI 2.10–2.55)", "verdict: a is #x slower than b (# % CI #–#)"),
    ("1,234", "#"),
    ("-3.5e-06", "#"),
    ("12 %", "# %"),
    ("12%", "#"),
    ("+0.5 and −2", "# and #"),
    ("40_000 orders, 1,234,567 bytes", "# orders, # bytes"),
    ("  verdict: p99 rises with load on Python 3.11.7  ", "verdict: p99 rises with load on Python #"),
    ("verdict: no difference detectable at this noise: the CI spans 1.0 (0.93–1.08)",
     "verdict: no difference detectable at this noise: the CI spans # (#–#)"),
])
def test_normalise_replaces_numbers_and_keeps_words(line: str, expected: str) -> None:
    assert normalise(line) == expected


def test_normalise_keeps_the_category_apart() -> None:
    assert normalise("verdict: a is 2.31x slower than b") != normalise("verdict: a is 1.10x faster than b")


def _run(*lines: str, error: str = "") -> Run:
    return Run(seconds=1.0, verdicts=[Verdict(line, normalise(line), 1) for line in lines], error=error)


def _result(*runs: Run) -> ChapterResult:
    queue = list(runs)
    return check_chapter(Path("x.ipynb"), runs=len(runs), run=lambda *_a, **_k: queue.pop(0))


def test_same_words_different_numbers_is_stable() -> None:
    result = _result(_run("verdict: a is 2.1x slower than b"), _run("verdict: a is 3.4x slower than b"))
    assert result.stable
    assert format_chapter(result) == ["  stable: all 2 runs gave the same 1 verdicts",
                                      "    verdict 1: verdict: a is <slower> b · slower, 2 of 2 runs"]


def test_no_verdicts_is_stable_and_says_so() -> None:
    result = _result(_run(), _run())
    assert result.stable
    assert format_chapter(result) == ["  stable, trivially: none of the 2 runs printed a verdict line"]


def test_a_flipped_verdict_is_shown_as_records_with_its_flip_count() -> None:
    same, slower, faster = "verdict: same", "verdict: a is 2x slower than b", "verdict: a is 2x faster than b"
    result = _result(_run(same, slower), _run(same, faster), _run(same, slower))
    assert not result.stable
    assert result.differing_positions() == [1]
    assert [t.flips for t in result.tallies()] == [0, 1]
    text = "\n".join(format_chapter(result))
    assert "UNSTABLE: 1 of 2 verdicts flipped in 3 runs" in text
    assert "verdict 2 differs: verdict: a is <slower> b · slower in 2 of 3 runs, FLIPPED in 1" in text
    assert "run 2 (cell 1): verdict: a is <faster> b · faster" in text and "raw: verdict: a is 2x faster than b" in text


def test_numbers_cannot_hide_a_flipped_direction() -> None:
    """Issue 21's example: the same words, the direction carried by two numbers. Free text says so."""
    result = _result(_run("verdict: 3.12 ms with the default and 15.91 ms with GcPolicy"),
                     _run("verdict: 8.23 ms with the default and 7.48 ms with GcPolicy"))
    assert result.stable  # the text cannot tell: the report must say it is not checked
    assert "free text" in format_chapter(result)[1] and "not checked" in format_chapter(result)[1]
    kit_made = _result(_run("verdict: the default is 5.1x faster than GcPolicy"),
                       _run("verdict: the default is 1.1x slower than GcPolicy"))
    assert not kit_made.stable


def test_records_are_read_from_the_kit_s_rich_output() -> None:
    import nbformat.v4 as v4

    from edumatcher.kit import Measurement, claim, compare

    slow = Measurement.from_samples([2.0] * 12, label="json")
    fast = Measurement.from_samples([1.0] * 12, label="orjson")
    c = compare(slow, fast, key="encode", verb="encodes")
    bundle = c._repr_mimebundle_()
    made = claim("rebuilds", "thin out", "rebuilds thin out as the book grows")
    nb = v4.new_notebook(cells=[v4.new_code_cell(outputs=[
        v4.new_output("display_data", data=bundle),
        v4.new_output("execute_result", data=made._repr_mimebundle_()),
        v4.new_output("stream", name="stdout", text=f"verdict: {c.verdict}\n"),
    ])])
    found = verdict_lines(nb)
    assert [v.record.fixed_form() for v in found] == [
        "encode · slower · json > orjson", "rebuilds · thin out", "verdict: json encodes <slower> orjson · slower"]
    assert found[0].raw == "verdict: json encodes 2.00x slower than orjson" and found[0].record.processes == 1
    assert str(made) == "verdict: rebuilds thin out as the book grows"


def test_a_claim_line_fits_in_160_characters_with_its_prefix() -> None:
    from edumatcher.kit import claim

    assert len(str(claim("x", "fits", "a" * 151))) == 160
    with pytest.raises(ValueError, match="160"):
        claim("x", "too long", "a" * 152)
    with pytest.raises(ValueError, match="one line"):
        claim("x", "two lines", "a conclusion\n    and its figures")


def test_record_of_reads_the_kit_s_phrases_old_and_new() -> None:
    assert record_of("verdict: a and b take the same time to within 5 % (ratio 1.01)").category == "same"
    assert record_of("verdict: no difference detectable at this noise: the CI spans 1.0").category == \
        "too close to call"
    assert record_of("verdict: too close to call: a against b is 1.04x").category == "too close to call"
    assert record_of("verdict: one function dominates this profile").category == ""


def test_the_default_run_count_catches_a_ten_percent_flip_rate() -> None:
    runs = verdict_check.DEFAULT_RUNS
    assert 1 - 0.9**runs - 0.1**runs >= 0.95 > 1 - 0.9 ** (runs - 1) - 0.1 ** (runs - 1)


def test_a_different_number_of_verdicts_is_unstable() -> None:
    result = _result(_run("verdict: same"), _run("verdict: same", "verdict: slower"))
    assert not result.stable
    text = "\n".join(format_chapter(result))
    assert "run 1: 1, run 2: 2" in text and "run 1: (no verdict 2)" in text


def test_a_failed_run_is_unstable_even_with_equal_verdicts() -> None:
    result = _result(_run("verdict: same"), _run("verdict: same", error="cell 2 (x): ValueError: boom"))
    assert not result.stable
    assert format_chapter(result)[0] == "  UNSTABLE: 1 of 2 runs failed (run 2; errors above)"


def test_find_chapters_by_prefix_number_and_path(tmp_path: Path) -> None:
    for name in ("00_start.ipynb", "03_build.ipynb", "10_beyond.ipynb", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in find_chapters(["3"], tmp_path)] == ["03_build.ipynb"]
    assert [p.name for p in find_chapters(["10", "03"], tmp_path)] == ["10_beyond.ipynb", "03_build.ipynb"]
    assert [p.name for p in find_chapters([], tmp_path)] == ["00_start.ipynb", "03_build.ipynb", "10_beyond.ipynb"]
    assert find_chapters([str(tmp_path / "00_start.ipynb")], tmp_path) == [tmp_path / "00_start.ipynb"]


def test_an_unknown_chapter_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-verdicts", "99_no_such_chapter"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: no chapter matches '99_no_such_chapter'") and err.count("\n") == 1


def test_bad_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-verdicts", "--runs", "0"]) == 1
    assert "--runs must be at least 1" in capsys.readouterr().err


def test_the_hog_keeper_restarts_workers_that_left() -> None:
    with verdict_check._HogKeeper(1) as keeper:
        first = keeper._hog
        assert first.alive() == 1
        first.stop()  # as if its max_seconds had run out
        keeper.refresh()
        assert keeper._hog is not first and keeper._hog.alive() == 1
        second = keeper._hog
    assert second.alive() == 0


@pytest.fixture
def notebooks(tmp_path: Path) -> Path:
    """Copies of the fixtures: ``unstable`` writes its counter beside itself."""
    for path in FIXTURES.glob("*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_real_runs_stable_unstable_and_failing(notebooks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [str(notebooks / f"{name}.ipynb") for name in ("stable", "unstable", "raises")]
    report = notebooks / "report.json"
    assert main(["check-verdicts", *names, "--runs", "2", "--timeout", "30", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    chapters = out.split(f"{notebooks}{'/'}")
    stable, unstable, raises = (next(c for c in chapters if c.startswith(f"{n}.ipynb")) for n in
                                ("stable", "unstable", "raises"))
    assert "stable: all 2 runs gave the same 2 verdicts" in stable
    assert "verdict 2 differs:" in unstable and "· faster" in unstable and "· slower" in unstable
    assert "FLIPPED in 1" in unstable and "verdict 1 differs" not in unstable
    assert "FAILED: cell 2 (raise ValueError(" in raises and "ValueError: the fixture fails on purpose" in raises
    assert "UNSTABLE: 2 of 2 runs failed" in raises
    assert "summary: 1 of 3 stable" in out

    data = json.loads(report.read_text())
    assert [c["stable"] for c in data["chapters"]] == [True, False, False]
    first = data["chapters"][0]["runs"][0]["verdicts"][0]
    assert first["normalised"] == "verdict: a is #x slower than b (# % CI #–#)" and first["cell"] == 1
    assert data["chapters"][0]["runs"][0]["verdicts"][1]["normalised"] == "verdict: # orders matched"  # from HTML
    assert data["chapters"][2]["runs"][0]["verdicts"][0]["raw"] == "verdict: same"  # kept from before the error


def test_a_stable_chapter_under_a_hog_exits_zero(notebooks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-verdicts", str(notebooks / "stable.ipynb"), "--runs", "2", "--hog", "1", "--timeout", "30"]) == 0
    out = capsys.readouterr().out
    assert "1 CPU-hog process" in out and "summary: 1 of 1 stable" in out


def test_a_cell_that_overruns_fails_its_run(notebooks: Path) -> None:
    run = run_notebook(notebooks / "sleeps.ipynb", timeout=2)
    assert not run.ok and run.error == "cell 1 (import time): timed out after 2 s"


def test_a_real_kernel_carries_the_kit_s_records_to_the_check(tmp_path: Path) -> None:
    import nbformat.v4 as v4

    nb = v4.new_notebook(cells=[
        v4.new_code_cell("from edumatcher.kit import Measurement, compare, claim\n"
                         "c = compare(Measurement.from_samples([2.0] * 12, label='json'),\n"
                         "            Measurement.from_samples([1.0] * 12, label='orjson'), key='encode')\n"
                         "c"),
        v4.new_code_cell("claim('rebuilds', 'thin out', 'rebuilds thin out as the book grows')"),
        v4.new_code_cell("print(c.as_ratio())"),
    ])
    path = tmp_path / "records.ipynb"
    path.write_text(nbformat_dumps(nb), encoding="utf-8")
    run = run_notebook(path, timeout=60)
    assert run.ok, run.error
    assert [v.record.fixed_form() for v in run.verdicts] == ["encode · slower · json > orjson", "rebuilds · thin out"]
