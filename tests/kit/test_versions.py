"""``python -m edumatcher versions``: discovery, the table, figure and JSON, failures, and a real run.

Structural checks only: no test asserts a speed.
"""

from __future__ import annotations

import json
import os
import random
import stat
import sys
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from edumatcher.cli import main
from edumatcher.kit import version_suite, versions
from edumatcher.kit.versions import (
    TABLE_WIDTH,
    Found,
    Skipped,
    SuiteRun,
    analyse,
    changes,
    discover,
    parse_py_launcher,
    render_table,
    skipped_summary,
    to_json,
)
from edumatcher.kit.versions_view import RATIO_KEYS, default_selection, ratio_bars, skipped_details, versions_explorer

STDLIB_FIGURES = [k for k in version_suite.FIGURES if k not in ("dumps", "bare_book")]


def _exe(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _fake_probe(versions_by_path: dict[str, tuple[int, int, int]]):
    def probe(path: str) -> dict:
        if path not in versions_by_path:
            raise RuntimeError("exit 1: broken")
        return {"version": list(versions_by_path[path]), "implementation": "CPython", "executable": path}
    return probe


# --------------------------------------------------------------------------- discovery


def test_discovery_finds_pyenv_uv_and_path_and_skips_old_shims_and_duplicates(tmp_path: Path) -> None:
    pyenv = tmp_path / "pyenv"
    p310 = _exe(pyenv / "versions/3.10.13/bin/python3.10")
    p312 = _exe(pyenv / "versions/3.12.1/bin/python3.12")
    _exe(pyenv / "versions/3.12.1/bin/python3.12-config")  # not an interpreter name
    p39 = _exe(pyenv / "versions/3.9.18/bin/python3.9")
    p27 = _exe(pyenv / "versions/2.7.18/bin/python2.7")
    uv = _exe(tmp_path / "uv/cpython-3.13.0-linux/bin/python3.13")
    on_path = _exe(tmp_path / "bin/python3.11")
    same_version = _exe(tmp_path / "other/python3.12")  # another copy of 3.12.1
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    os.symlink(p310, link_dir / "python3.10")  # the same file as pyenv's
    _exe(tmp_path / "shims/python3.12", "#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2; exit 127\n")
    broken = _exe(tmp_path / "broken/python3.14")
    probe = _fake_probe({p310: (3, 10, 13), p312: (3, 12, 1), uv: (3, 13, 0), on_path: (3, 11, 7),
                         same_version: (3, 12, 1)})
    path_env = os.pathsep.join(str(tmp_path / d) for d in ("shims", "bin", "other", "links", "broken"))
    found = discover(probe=probe, current="", path_env=path_env, pyenv_root=str(pyenv), uv_root=str(tmp_path / "uv"),
                     py_launcher=lambda: "")
    assert [f.version for f in found.found] == ["3.10.13", "3.11.7", "3.12.1", "3.13.0"]
    assert {f.version: f.source for f in found.found} == {"3.10.13": "pyenv", "3.11.7": "PATH", "3.12.1": "pyenv",
                                                          "3.13.0": "uv"}
    reasons = {s.path: s.reason for s in found.skipped}
    assert "older than 3.10" in reasons[p39] and "Python 3.9 " in reasons[p39]
    assert "older than 3.10" in reasons[p27]
    assert "shim" in reasons[str(tmp_path / "shims")]
    assert "same interpreter" in reasons[same_version]
    assert "same file" in reasons[str(link_dir / "python3.10")]
    assert "not a working interpreter" in reasons[broken]
    assert all(str(s).startswith("skipped ") for s in found.skipped)


def test_discovery_puts_this_interpreter_and_python_option_first_and_skips_other_implementations(tmp_path: Path) -> None:
    mine = _exe(tmp_path / "venv/python")
    extra = _exe(tmp_path / "custom/python")
    pypy = _exe(tmp_path / "bin/python3.10")

    def probe(path: str) -> dict:
        if path == pypy:
            return {"version": [3, 10, 14], "implementation": "PyPy", "executable": path}
        return {"version": [3, 11, 7] if path == mine else [3, 14, 0], "implementation": "CPython", "executable": path}

    found = discover([extra], probe=probe, current=mine, path_env=str(tmp_path / "bin"),
                     pyenv_root=str(tmp_path / "none"), uv_root=str(tmp_path / "none"), py_launcher=lambda: "")
    assert [(f.source, f.version) for f in found.found] == [("this interpreter", "3.11.7"), ("--python", "3.14.0")]
    assert "PyPy" in found.skipped[0].reason


def test_py_launcher_output_in_both_formats() -> None:
    old = " -3.12-64        C:\\Python312\\python.exe *\n -3.10-64        C:\\Program Files\\Python310\\python.exe\n"
    new = " -V:3.13 *        C:\\Users\\a b\\Python313\\python.exe\n -V:ContinuumAnalytics/Anaconda39-64 C:\\x\\python.exe"
    assert parse_py_launcher(new) == ["C:\\Users\\a b\\Python313\\python.exe", "C:\\x\\python.exe"]
    assert parse_py_launcher(old)[1] == "C:\\Program Files\\Python310\\python.exe"
    assert parse_py_launcher("Installed Pythons found by py Launcher for Windows\n") == []


# --------------------------------------------------------------------------- canned child results


def _pair(rng: random.Random, ratio: float, base: float = 1e-7) -> dict:
    xs = [base * ratio * rng.uniform(0.97, 1.03) for _ in range(40)]
    ys = [base * rng.uniform(0.97, 1.03) for _ in range(40)]
    return {"kind": "pair", "labels": ["a", "b"], "a": xs, "b": ys, "number": [100, 100],
            "stop_reason": "cap", "clock": "thread CPU time"}


def canned_result(version: str, *, orjson: bool = True, engine: bool = True, seed: int = 1) -> dict:
    """What version_suite prints, with synthetic samples (known ratios), for one interpreter."""
    rng = random.Random(seed)
    figures = {
        "slots_memory": {"kind": "bytes", "labels": ["plain", "slots=True"], "a": 232.0, "b": 176.0},
        "slots_construct": _pair(rng, 1.1 if version.startswith("3.11") else 2.5),
        "from_dict": _pair(rng, 5.0), "enum_lookup": _pair(rng, 12.0), "member_value": _pair(rng, 3.0),
        "member_read": _pair(rng, 1.0), "ids": _pair(rng, 6.0),
        "dumps": _pair(rng, 12.0) if orjson else {"kind": "missing", "reason": "orjson not installed (No module)"},
        "gc_freeze": _pair(rng, 5000.0, 1e-6),
        "gc_young": {"kind": "samples", "samples": [8e-6 * rng.uniform(0.9, 1.1) for _ in range(30)],
                     "threshold": [700, 10, 10]},
        "bare_book": ({"kind": "passes", "samples": [0.005 * rng.uniform(0.95, 1.05) for _ in range(6)], "ops": 5000}
                      if engine else {"kind": "missing", "reason": "engine not importable here (SyntaxError: x)"}),
    }
    return {"suite": 1, "interpreter": {"implementation": "CPython", "version": version, "build": "main", "compiler": "GCC",
                                        "flags": []},
            "clock": "thread CPU time", "budget": 0.2, "quick": True,
            "sizes": {"gc_objects": 50_000, "young_allocations": 100_000, "book_ops": 5_000},
            "facts": {"gc_threshold": [700, 10, 10], "atomic_dict_tracked": False}, "figures": figures}


def _found(version: str, source: str = "pyenv") -> Found:
    return Found(f"/fake/{version}/python", source, version, "CPython", f"/fake/{version}/python")


def _canned_runs() -> list[SuiteRun]:
    return [
        SuiteRun(_found("3.11.7", "this interpreter"), canned_result("3.11.7"), seconds=2.0),
        SuiteRun(_found("3.12.1"), canned_result("3.12.1", orjson=False, seed=2), seconds=2.0),
        SuiteRun(_found("3.13.0"), error="exit 1: boom"),
    ]


def test_table_has_a_column_per_interpreter_the_quoted_column_and_the_failure_line() -> None:
    report = analyse(_canned_runs(), budget=0.2, quick=True)
    text = render_table(report)
    header = text.splitlines()[0]
    assert "CPython 3.11.7" in header and "CPython 3.12.1" in header and "CPython 3.13.0" not in header
    assert "Python engine notes" in header and "quoted, CPython 3.14.10" in text.splitlines()[1]
    assert "orjson not installed" in text, "the missing module is named, not read as json.dumps() missing"
    assert "FAILED CPython 3.13.0 (/fake/3.13.0/python): exit 1: boom" in text.splitlines()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("from dict"))
    assert "[" in lines[start + 2] and "slower" in lines[start + 3]  # ratio and its CI, then its outcome
    assert "2505 ns" in text and "(2000, 10, 10)" in text  # quoted figures sit beside
    assert "6.5 ms (50 000 obj.)" in text  # the quoted collection of the quick size
    assert all(len(line) <= TABLE_WIDTH for line in lines if not line.startswith("FAILED")), "fits 100 columns"


def test_a_wide_table_is_split_into_blocks_that_fit_and_each_repeats_the_row_titles() -> None:
    runs = [SuiteRun(_found(f"3.1{k}.0"), canned_result(f"3.1{k}.0", seed=k), seconds=1.0) for k in range(5)]
    text = render_table(analyse(runs, budget=0.2, quick=True))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    headers = [line for line in lines if line.startswith("figure")]
    assert len(headers) >= 2, "five interpreters and the quoted column do not fit one block of 100 columns"
    assert sum(line.count("CPython 3.1") for line in headers) == 5 and sum("engine notes" in h for h in headers) == 1
    assert sum(line.startswith("from dict") for line in lines) == len(headers), "each block repeats the row titles"


def test_skipped_summary_counts_the_reasons_in_one_line() -> None:
    skipped = [Skipped("/usr/bin/python2.7", "PATH", "Python 2.7 is older than 3.10, the oldest the course supports"),
               Skipped("/usr/bin/python3.8", "PATH", "Python 3.8 is older than 3.10, the oldest the course supports"),
               Skipped("/x/python3.12", "pyenv", "the same interpreter as /y/python3.12 (CPython 3.12.1)")]
    assert skipped_summary(skipped) == "skipped 3 candidates: 2 older than 3.10, 1 a copy of another"
    folded = skipped_details(skipped)
    assert folded.startswith("<details>") and "python2.7" in folded and skipped_details([]) == ""


def test_changes_name_a_ratio_that_moved_and_one_that_did_not() -> None:
    report = analyse(_canned_runs())
    lines = {line.split(":")[1].strip(): line for line in changes(report)}
    construct = next(line for line in changes(report) if line.startswith("slots: construct"))
    assert "CHANGES with the interpreter" in construct  # 1.1 against 2.5
    from_dict = next(line for line in changes(report) if line.startswith("from dict"))
    assert "CHANGES" not in from_dict
    assert lines  # one line per ratio


def test_json_holds_raw_samples_ratios_quotes_and_errors() -> None:
    report = analyse(_canned_runs())
    data = json.loads(json.dumps(to_json(report)))
    first, _, failed = data["interpreters"]
    assert first["result"]["figures"]["from_dict"]["a"]  # raw samples kept
    assert first["ratios"]["from_dict"]["outcome"] == "slower"
    lo, hi = first["ratios"]["from_dict"]["ci"]
    assert lo <= first["ratios"]["from_dict"]["ratio"] <= hi
    assert first["ratios"]["slots_memory"]["outcome"] == "exact"
    assert failed["ok"] is False and failed["error"] == "exit 1: boom"
    assert data["quoted"]["from_dict"]["ratio"] == pytest.approx(5.0, rel=0.01)


def test_figure_has_a_panel_per_ratio_a_colour_per_interpreter_and_a_bar_per_ratio_measured() -> None:
    report = analyse(_canned_runs())
    fig = ratio_bars(report)
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(RATIO_KEYS), "one panel per ratio, each with its own scale"
    scales = {ax.get_title(): ax.get_yscale() for ax in panels}
    assert scales["full collect / after gc.freeze()"] == "log" and scales["S(**d) / __new__ + 18 writes"] == "linear"
    bars = [p for ax in panels for p in ax.patches]
    # 3.11.7 has every ratio; 3.12.1 lacks orjson; the failed run draws nothing
    assert len(bars) == 2 * len(RATIO_KEYS) - 1
    assert len({matplotlib.colors.to_hex(b.get_facecolor()) for b in bars}) == 2, "a distinct colour per interpreter"
    assert any(t.get_text() == "orjson not installed" for ax in panels for t in ax.texts)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[0].startswith("CPython 3.11.7") and "quoted: Python engine notes, CPython 3.14.10" in legend
    assert all(ax.get_ylabel().startswith("ratio") for ax in panels) and fig.get_suptitle()


def test_widget_runs_the_picked_interpreters_once_each() -> None:
    from edumatcher.kit.versions import Discovery

    calls: list[str] = []

    def runner(found: Found, **_: object) -> SuiteRun:
        calls.append(found.version)
        return SuiteRun(found, canned_result(found.version))

    discovery = Discovery(found=[_found("3.11.7", "this interpreter"), _found("3.12.1")])
    control = versions_explorer(discovery, runner=runner)
    assert calls == ["3.11.7"]  # drawn once at creation, with the kernel's interpreter
    assert isinstance(control.last[1], Figure) and "CPython 3.11.7" in control.last[0].value  # the table first
    control.controls["interpreters"].value = ("/fake/3.11.7/python", "/fake/3.12.1/python")
    assert calls == ["3.11.7", "3.12.1"]  # the first is not run again
    assert "CPython 3.12.1" in control.last[0].value
    control.controls["interpreters"].value = ()
    assert "Pick at least one" in control.last[0].value
    assert default_selection([_found("3.12.1")]) == ("/fake/3.12.1/python",)


# --------------------------------------------------------------------------- failures


def test_an_interpreter_that_exits_1_gives_one_error_line(tmp_path: Path) -> None:
    broken = _exe(tmp_path / "python3.99", "#!/bin/sh\necho 'Fatal Python error: init failed' >&2\nexit 1\n")
    run = versions.run_one(Found(broken, "--python", "3.99.0", "CPython", broken))
    assert not run.ok
    assert run.error_line() == f"FAILED CPython 3.99.0 ({broken}): exit 1: Fatal Python error: init failed"


def test_an_interpreter_that_prints_no_json_is_a_failure(tmp_path: Path) -> None:
    chatty = _exe(tmp_path / "python3.98", "#!/bin/sh\necho hello\n")
    run = versions.run_one(Found(chatty, "--python", "3.98.0", "CPython", chatty))
    assert not run.ok and run.error.startswith("printed no JSON result")


def test_cli_reports_the_good_interpreter_and_the_broken_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Answers the discovery probe as a CPython 3.99, then fails when asked to run the suite.
    fake = _exe(tmp_path / "python3.99", "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then echo "
                "'{\"version\": [3, 99, 0], \"implementation\": \"CPython\", \"executable\": \"/nowhere/python3.99\"}'; "
                "exit 0; fi\necho 'suite crashed' >&2\nexit 1\n")
    out_json, out_png = tmp_path / "v.json", tmp_path / "v.png"
    code = main(["versions", "--only-python", "--python", fake, "--quick", "--budget", "0.05",
                 "--json", str(out_json), "--figure", str(out_png)])
    captured = capsys.readouterr()
    assert code == 1  # one interpreter failed; the other is still reported
    assert f"FAILED CPython 3.99.0 ({fake}): exit 1: suite crashed" in captured.out
    assert f"CPython {sys.version.split()[0]}" in captured.out.splitlines()[0]
    assert "[1/2]" not in captured.err and "(--verbose shows progress)" in captured.err  # quiet by default
    assert out_png.stat().st_size > 0
    assert len(json.loads(out_json.read_text())["interpreters"]) == 2


def test_cli_prints_progress_and_each_skipped_candidate_only_with_verbose(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from edumatcher.kit.versions import Discovery

    found = Discovery(found=[_found("3.11.7", "this interpreter")],
                      skipped=[Skipped("/usr/bin/python2.7", "PATH", "Python 2.7 is older than 3.10, the oldest ...")])
    monkeypatch.setattr(versions, "discover", lambda *a, **k: found)

    def fake_run_all(interpreters: list[Found], *, say: object = None, **_: object) -> list[SuiteRun]:
        assert callable(say)
        say("[1/1] CPython 3.11.7")
        return [SuiteRun(i, canned_result(i.version)) for i in interpreters]

    monkeypatch.setattr(versions, "run_all", fake_run_all)
    args = ["versions", "--no-figure", "--json", str(tmp_path / "v.json")]
    assert main(args) == 0
    quiet = capsys.readouterr()
    assert "[1/1]" not in quiet.err and "python2.7" not in quiet.out + quiet.err
    assert "skipped 1 candidate: 1 older than 3.10 (--verbose lists them)" in quiet.out
    assert quiet.out.splitlines()[0].startswith("figure"), "the table comes first"
    assert all(len(line) <= TABLE_WIDTH for line in quiet.out.splitlines())
    assert main([*args, "--verbose"]) == 0
    loud = capsys.readouterr()
    assert "[1/1] CPython 3.11.7" in loud.err and "skipped /usr/bin/python2.7 (PATH)" in loud.err


def test_cli_rejects_a_bad_budget_and_a_missing_python(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["versions", "--budget", "0"]) == 1
    assert main(["versions", "--python", "/no/such/python3.12"]) == 1
    err = capsys.readouterr().err
    assert "Error: --budget" in err and "Error: --python /no/such/python3.12: no such file" in err


# --------------------------------------------------------------------------- the real suite


def _pyenv_interpreters() -> list[str]:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = []
    for minor in (10, 11, 12, 13):
        found += sorted(str(p) for p in root.glob(f"3.{minor}.*/bin/python3.{minor}"))
    return found


def test_suite_produces_every_figure_on_every_pyenv_interpreter() -> None:
    paths = _pyenv_interpreters()
    if not paths:
        pytest.skip("no pyenv CPython 3.10-3.13 on this machine")
    for path in paths:
        run = versions.run_one(Found(path, "pyenv", "?", "CPython", path), budget=0.1, quick=True)
        assert run.ok, run.error_line()
        figures = run.result["figures"]
        assert set(figures) == set(version_suite.FIGURES), path
        for key in STDLIB_FIGURES:  # the standard library's figures must all be numbers
            fig = figures[key]
            assert fig["kind"] in ("pair", "bytes", "samples"), (path, key, fig)
            numbers = (fig["a"] + fig["b"]) if fig["kind"] == "pair" else (
                [fig["a"], fig["b"]] if fig["kind"] == "bytes" else fig["samples"])
            assert numbers and all(isinstance(x, float) and x >= 0 for x in numbers), (path, key)
        for key in ("dumps", "bare_book"):  # produced, or missing with a reason
            fig = figures[key]
            assert fig["kind"] in ("pair", "passes") or (fig["kind"] == "missing" and fig["reason"]), (path, key, fig)
        report = analyse([run])
        assert all(report.ratio(run, key) is not None for key in RATIO_KEYS if figures[key]["kind"] != "missing")
