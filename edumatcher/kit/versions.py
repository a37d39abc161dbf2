"""Your numbers on every interpreter you have, side by side: ``python -m edumatcher versions``.

The course's figures belong to an interpreter. The Python engine notes measured on CPython 3.14;
Binder runs one version, a laptop another, and several of the course's effects
change between them. This module finds the CPython interpreters on the machine,
runs the same suite of the course's headline measurements in each
(``edumatcher/kit/version_suite.py``, a standard-library-only script, in a fresh
process per interpreter, one interpreter after another so they never compete for
the cores), and reports them in one table, interpreters as columns, with seed
000's quoted CPython 3.14 figures beside them.

Where interpreters come from (``discover``), in this order; the first path found
for an interpreter wins, later copies are reported as duplicates:

1. the running interpreter (``sys.executable``: a venv keeps its packages, e.g. orjson);
2. ``--python PATH`` (``extra``);
3. pyenv: ``$PYENV_ROOT/versions/*/bin/python3.N`` (pyenv's *shims* are skipped:
   a shim runs whichever version pyenv selects, or fails);
4. uv: ``$UV_PYTHON_INSTALL_DIR`` or ``~/.local/share/uv/python/*/bin/python3.N``;
5. ``python3.N`` on ``PATH``;
6. on Windows, ``py -0p``.

Anything older than 3.10 (the oldest the course supports) or not CPython is
skipped with a line saying why. Two paths are the same interpreter when their
real paths match, or when they report the same implementation and full version.

The child returns raw samples; every ratio's 95 % confidence interval and its
outcome (slower / faster / same / undetermined) are computed here with
``edumatcher.kit`` (the median of the per-round ratios and its distribution-free
interval; one process per interpreter, so the interval covers that process only).
An interpreter whose run fails gives one error line and the others are still reported.

>>> parse_py_launcher(" -V:3.12 *        C:\\\\Python312\\\\python.exe\\n -V:3.11          C:\\\\Py 311\\\\python.exe")
['C:\\\\Python312\\\\python.exe', 'C:\\\\Py 311\\\\python.exe']
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._formatter import _align, format_rate, format_seconds
from ._measurement import Measurement
from ._metadata import InterpreterInfo, machine

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ._compare import Comparison

__all__ = [
    "MIN_VERSION", "SUITE", "QUOTED_SOURCE", "FigureSpec", "SPECS", "Found", "Skipped", "Discovery", "Candidate",
    "candidates", "discover", "probe", "parse_py_launcher", "SuiteRun", "run_one", "run_all", "Report",
    "analyse", "ratio_of", "render_table", "TABLE_WIDTH", "QUOTED_HEADER", "skipped_summary", "changes",
    "CHANGE_FACTOR", "to_json", "add_parser", "QUICK_BUDGET", "DEFAULT_BUDGET",
    "RATIO_KEYS", "QUOTED_COLOUR", "ratio_bars", "LOG_ABOVE",
]

MIN_VERSION = (3, 10)
"""The oldest CPython the course supports; older interpreters are skipped."""

SUITE = Path(__file__).with_name("version_suite.py")
"""The script each interpreter runs."""

ROOT = str(Path(__file__).resolve().parents[2])
"""The checkout the child imports the engine from."""

DEFAULT_BUDGET = 1.0
"""Seconds per comparison in a normal run."""

QUICK_BUDGET = 0.2
"""Seconds per comparison with ``--quick`` (and smaller collector and book sizes)."""

PROBE_LIMIT = 65_536
"""Characters of a probed interpreter's output read back (its answer is one short line)."""

LINE_LIMIT = 1_000
"""Characters of one progress line read from a suite child at a time."""

RESULT_LIMIT = 50_000_000
"""Characters of a suite child's JSON result read back; a real one is well under a megabyte."""

QUOTED_SOURCE = "quoted: Python engine notes, CPython 3.14.10"
"""Header of the quoted column: the Python engine notes' chapter measured on CPython 3.14.10, x86-64 Linux."""

_VERSION_NAME = re.compile(r"^python(\d)\.(\d+)$")
_PROBE = ("import sys, platform, json; print(json.dumps({'version': list(sys.version_info[:3]), "
          "'implementation': platform.python_implementation(), 'executable': sys.executable}))")


# --------------------------------------------------------------------------- what is measured


@dataclass(frozen=True)
class FigureSpec:
    """One figure of the suite: how to title it, what the Python engine notes quoted, and what the course concludes from it.

    For a pair, the ratio is ``a / b`` ("without the technique" over "with it"),
    so above 1 means the technique saves time (or memory). ``claim`` is the
    course's statement about it, ``judged`` whether a chapter prints a verdict on
    it (a pair the course only reports is too close to 1 on some interpreter).
    """

    key: str
    title: str
    claim: str
    quoted: tuple[str, ...] = ()
    quoted_ratio: float | None = None
    judged: bool = True
    chapter: str = ""


SPECS: tuple[FigureSpec, ...] = (
    FigureSpec("slots_memory", "slots: bytes each, plain / slots=True",
               "slots save memory per instance", ("240 B", "184 B"), 240 / 184, True, "02"),
    FigureSpec("slots_construct", "slots: construct, plain P() / slotted S()",
               "slots make construction cheaper (2.5x on 3.14)", ("456 ns", "184 ns"), 456 / 184, False, "02"),
    FigureSpec("from_dict", "from dict: S(**d) / __new__ + 18 writes",
               "__new__ plus direct writes beats keyword dispatch", ("2505 ns", "501 ns"), 2505 / 501, True, "03"),
    FigureSpec("enum_lookup", 'enum: OrderType("LIMIT") / dict table',
               "a prebuilt table beats Enum(value)", ("203 ns", "22 ns"), 203 / 22, True, "03"),
    FigureSpec("member_value", "enum: Side.BUY.value / Side.BUY",
               ".value costs a descriptor call the member does not", ("107 ns", "23 ns"), 107 / 23, True, "03"),
    FigureSpec("member_read", "enum: Side.BUY / module constant",
               "a module constant is cheaper to read than Side.BUY (changed in 3.12)", (), None, False, "03"),
    FigureSpec("ids", "ids: str(uuid4()) / urandom(16).hex()",
               "urandom(16).hex() is the cheaper 128-bit id", ("1218 ns", "170 ns"), 1218 / 170, True, "03"),
    FigureSpec("dumps", "encode: json.dumps().encode() / orjson.dumps()",
               "orjson encodes several times faster", ("3036 ns", "277 ns"), 3036 / 277, True, "04"),
    FigureSpec("gc_freeze", "gc: full collect / after gc.freeze()",
               "gc.freeze() takes the live objects out of a full collection",
               ("24.6 ms (200 000 obj.)", "0.000 ms"), None, True, "07"),
    FigureSpec("gc_young", "gc: young pause (default)",
               "a young collection is short; full ones are long", ("~0.25 ms, engine, 3.14.8",), None, False, "07"),
    FigureSpec("bare_book", "BareBook ops/s, standard", "", (), None, False, "05"),
)
"""Every figure of ``version_suite.FIGURES``, in table order."""

_SPEC = {s.key: s for s in SPECS}


# --------------------------------------------------------------------------- discovery


@dataclass(frozen=True)
class Candidate:
    """A path that may be a Python interpreter, and where it was found (``"pyenv"``, ``"PATH"``...)."""

    path: str
    source: str


@dataclass(frozen=True)
class Found:
    """An interpreter the suite will run on."""

    path: str
    source: str
    version: str
    implementation: str
    realpath: str

    @property
    def name(self) -> str:
        """``CPython 3.12.1``."""
        return f"{self.implementation} {self.version}"


@dataclass(frozen=True)
class Skipped:
    """A candidate that will not run, and why (one line)."""

    path: str
    source: str
    reason: str

    def __str__(self) -> str:
        return f"skipped {self.path} ({self.source}): {self.reason}"


@dataclass
class Discovery:
    """What ``discover`` found: interpreters to run, and the candidates it skipped."""

    found: list[Found] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def skipped_summary(skipped: Sequence[Skipped]) -> str:
    """One line for the candidates that will not run: how many, and why, most common reason first.

    >>> skipped_summary([Skipped("/usr/bin/python2.7", "PATH", _too_old((2, 7))), Skipped("/a", "PATH", "the same file as /b")])
    'skipped 2 candidates: 1 older than 3.10, 1 a copy of another'
    >>> skipped_summary([])
    ''
    """
    if not skipped:
        return ""
    kinds: dict[str, int] = {}
    for s in skipped:
        kind = ("older than 3.10" if "older than" in s.reason else
                "a copy of another" if s.reason.startswith("the same") else
                "a version manager's shims" if "shim" in s.reason else
                "not a working interpreter" if s.reason.startswith("not a working") else "not CPython")
        kinds[kind] = kinds.get(kind, 0) + 1
    why = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return f"skipped {len(skipped)} candidate{'s' if len(skipped) != 1 else ''}: {why}"


def parse_py_launcher(text: str) -> list[str]:
    """The interpreter paths in the output of Windows' ``py -0p`` (old and new formats; paths may hold spaces)."""
    paths = []
    for line in text.splitlines():
        match = re.match(r"^\s*-\S+\s+(?:\*\s+)?(.*?\S)(?:\s+\*)?\s*$", line)  # old format: default marked last
        if match and match.group(1).lower().endswith(".exe"):
            paths.append(match.group(1))
    return paths


def _name_version(path: str) -> tuple[int, int] | None:
    match = _VERSION_NAME.match(os.path.basename(path))
    return (int(match.group(1)), int(match.group(2))) if match else None


def _too_old(version: Sequence[int]) -> str:
    shown = ".".join(str(v) for v in version)
    return f"Python {shown} is older than 3.10, the oldest the course supports"


def _versioned_in(folder: str) -> list[str]:
    """``python3.N`` files in ``folder``, sorted by version."""
    if not os.path.isdir(folder):
        return []
    names = [n for n in os.listdir(folder) if _VERSION_NAME.match(n)]
    return [os.path.join(folder, n) for n in sorted(names, key=lambda n: _name_version(n) or (0, 0))]


def candidates(
    *,
    extra: Sequence[str] = (),
    current: str | None = None,
    path_env: str | None = None,
    pyenv_root: str | None = None,
    uv_root: str | None = None,
    py_launcher: Callable[[], str] | None = None,
) -> tuple[list[Candidate], list[Skipped]]:
    """Every candidate path in discovery order, and the shim folders skipped on ``PATH``.

    Each argument defaults to this machine (``sys.executable``, ``$PATH``,
    ``$PYENV_ROOT`` or ``~/.pyenv``, ``$UV_PYTHON_INSTALL_DIR`` or uv's data
    folder, ``py -0p`` on Windows); tests pass fake folders.
    """
    found: list[Candidate] = []
    skipped: list[Skipped] = []
    current = sys.executable if current is None else current
    if current:
        found.append(Candidate(current, "this interpreter"))
    found += [Candidate(p, "--python") for p in extra]

    pyenv_root = pyenv_root if pyenv_root is not None else os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for version_dir in sorted(glob.glob(os.path.join(pyenv_root, "versions", "*"))):
        found += [Candidate(p, "pyenv") for p in _versioned_in(os.path.join(version_dir, "bin"))]

    if uv_root is None:
        data = os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share"))
        default = (os.path.join(os.environ.get("APPDATA", ""), "uv", "python") if os.name == "nt"
                   else os.path.join(data, "uv", "python"))
        uv_root = os.environ.get("UV_PYTHON_INSTALL_DIR", default)
    for install in sorted(glob.glob(os.path.join(uv_root, "*"))):
        found += [Candidate(p, "uv") for p in _versioned_in(os.path.join(install, "bin"))]
        if os.path.isfile(os.path.join(install, "python.exe")):
            found.append(Candidate(os.path.join(install, "python.exe"), "uv"))

    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    for folder in path_env.split(os.pathsep):
        if not folder or not os.path.isabs(folder):
            # A relative entry ("." or "bin") would run whatever python3.N sits in the current folder.
            continue
        names = _versioned_in(folder)
        if names and os.path.basename(os.path.normpath(folder)) == "shims":
            # A version manager's shim runs whichever version it selects (or fails), not the one it is named for.
            skipped.append(Skipped(folder, "PATH", f"{len(names)} shim(s) of a version manager; the interpreters "
                                                   "behind them are found where they are installed"))
            continue
        found += [Candidate(p, "PATH") for p in names]

    if py_launcher is None and os.name == "nt" and shutil.which("py"):
        def py_launcher() -> str:
            return subprocess.run(["py", "-0p"], capture_output=True, text=True, timeout=30).stdout
    if py_launcher is not None:
        found += [Candidate(p, "py -0p") for p in parse_py_launcher(py_launcher())]
    return found, skipped


def probe(path: str, *, timeout: float = 20.0) -> dict[str, Any]:
    """Ask the interpreter at ``path`` who it is: ``version`` (list), ``implementation``, ``executable``.

    Raises ``RuntimeError`` with a one-line reason if it does not run or answers nonsense.
    """
    # Whatever sits on PATH under a python3.N name is run here: its output goes to files and only
    # the first PROBE_LIMIT characters are read back, so a binary that floods its output cannot
    # fill this process's memory before the timeout ends it.
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out, \
            tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        try:
            returncode = subprocess.run([path, "-c", _PROBE], stdout=out, stderr=err, timeout=timeout,
                                        env=_child_env()).returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"does not run ({type(exc).__name__}: {exc})") from None
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(PROBE_LIMIT), err.read(PROBE_LIMIT)
    if returncode != 0:
        raise RuntimeError(f"exit {returncode}: {_last_line(stderr) or 'no error message'}")
    try:
        info = json.loads(stdout.strip().splitlines()[-1])
        return {"version": [int(v) for v in info["version"]], "implementation": str(info["implementation"]),
                "executable": str(info["executable"] or path)}
    except (ValueError, KeyError, IndexError, TypeError):
        raise RuntimeError(f"answered {stdout.strip()[:80]!r}, not its version") from None


def discover(
    extra: Sequence[str] = (), *, probe: Callable[[str], dict[str, Any]] = probe, **where: Any,
) -> Discovery:
    """Find the CPython 3.10+ interpreters on this machine (see the module docstring); ``where`` goes to ``candidates``."""
    cands, skipped = candidates(extra=extra, **where)
    result = Discovery(skipped=list(skipped))
    seen_paths: dict[str, Found] = {}
    seen_versions: dict[tuple[str, str], Found] = {}
    for cand in cands:
        named = _name_version(cand.path)
        if named is not None and named < MIN_VERSION and cand.source != "--python":
            result.skipped.append(Skipped(cand.path, cand.source, _too_old(named)))
            continue
        real = os.path.realpath(cand.path)
        if real in seen_paths:
            result.skipped.append(Skipped(cand.path, cand.source, f"the same file as {seen_paths[real].path}"))
            continue
        try:
            info = probe(cand.path)
        except RuntimeError as exc:
            result.skipped.append(Skipped(cand.path, cand.source, f"not a working interpreter: {exc}"))
            continue
        version = tuple(info["version"])
        if version[:2] < MIN_VERSION:
            result.skipped.append(Skipped(cand.path, cand.source, _too_old(version)))
            continue
        if info["implementation"] != "CPython":
            result.skipped.append(Skipped(cand.path, cand.source, f"{info['implementation']}: the course measures CPython"))
            continue
        real_exe = os.path.realpath(info["executable"])
        key = (info["implementation"], ".".join(str(v) for v in version))
        same = seen_paths.get(real_exe) or seen_versions.get(key)
        if same is not None:
            result.skipped.append(Skipped(cand.path, cand.source, f"the same interpreter as {same.path} ({same.name})"))
            seen_paths.setdefault(real, same)
            continue
        found = Found(cand.path, cand.source, key[1], key[0], real_exe)
        seen_paths[real] = seen_paths[real_exe] = found
        seen_versions[key] = found
        result.found.append(found)
    result.found.sort(key=lambda f: tuple(int(p) if p.isdigit() else 0 for p in f.version.split(".")))
    return result


# --------------------------------------------------------------------------- running the suite


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Another interpreter's site-packages on PYTHONPATH (a venv, a notebook server) would load extension
    # modules built for the wrong version; the child finds the engine through the "root" option instead.
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
        env.pop(name, None)
    return env


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@dataclass
class SuiteRun:
    """One interpreter's run: the child's JSON result, or a one-line error."""

    interpreter: Found
    result: dict[str, Any] | None = None
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the suite ran and returned a result."""
        return self.result is not None

    def error_line(self) -> str:
        """``FAILED CPython 3.12.1 (/path): exit 1: ...``."""
        return f"FAILED {self.interpreter.name} ({self.interpreter.path}): {self.error}"


def run_one(
    found: Found, *, budget: float = DEFAULT_BUDGET, quick: bool = False, timeout: float | None = None,
    on_line: Callable[[str], None] | None = None, script: str | os.PathLike[str] = SUITE,
    only: Sequence[str] | None = None,
) -> SuiteRun:
    """Run the suite script with ``found`` in a fresh process; its stderr lines go to ``on_line`` as they come.

    Never raises for a failing interpreter: the error is on the result.
    """
    options = {"budget": budget, "quick": quick, "root": ROOT}
    if only:
        options["only"] = list(only)
    timeout = 120.0 + 40 * budget if timeout is None else timeout
    started = time.perf_counter()
    run = SuiteRun(found)
    tail: list[str] = []
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as out:
        try:
            proc = subprocess.Popen([found.path, os.fspath(script), json.dumps(options)], stdout=out,
                                    stderr=subprocess.PIPE, text=True, env=_child_env())
        except OSError as exc:
            run.error = f"does not start ({exc})"
            return run

        def pump() -> None:
            assert proc.stderr is not None
            # readline(n) keeps one endless line from growing without bound; the rest of it comes
            # back as further pieces, each also bounded.
            while line := proc.stderr.readline(LINE_LIMIT):
                tail.append(line.rstrip())
                del tail[:-20]
                if on_line is not None and line.strip():
                    on_line(line.rstrip())

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            reader.join(5)
            run.error = f"timed out after {timeout:.0f} s"
            run.seconds = time.perf_counter() - started
            return run
        reader.join(5)
        run.seconds = time.perf_counter() - started
        if code != 0:
            run.error = f"exit {code}: {_last_line(chr(10).join(tail)) or 'no error message'}"
            return run
        out.seek(0)
        text = out.read(RESULT_LIMIT + 1)
    if len(text) > RESULT_LIMIT:
        run.error = f"printed more than {RESULT_LIMIT:,} characters; a suite result is far smaller"
        return run
    try:
        result = json.loads(text)
        if not isinstance(result, dict) or "figures" not in result:
            raise ValueError("no figures")
    except ValueError:
        run.error = f"printed no JSON result ({text.strip()[:60]!r})"
        return run
    run.result = result
    return run


def run_all(
    interpreters: Iterable[Found], *, budget: float = DEFAULT_BUDGET, quick: bool = False,
    say: Callable[[str], None] | None = None, runner: Callable[..., SuiteRun] = run_one,
) -> list[SuiteRun]:
    """Run the suite on each interpreter in turn (never two at once: they would time each other)."""
    found = list(interpreters)
    runs = []
    for i, interp in enumerate(found, 1):
        if say is not None:
            say(f"[{i}/{len(found)}] {interp.name} ({interp.path}, {interp.source})")
        run = runner(interp, budget=budget, quick=quick, on_line=say)
        if say is not None:
            say(run.error_line() if not run.ok else f"    done in {run.seconds:.1f} s")
        runs.append(run)
    return runs


# --------------------------------------------------------------------------- analysis


def _info(result: dict[str, Any]) -> InterpreterInfo:
    i = result.get("interpreter", {})
    return InterpreterInfo(implementation=i.get("implementation", "?"), version=i.get("version", "?"),
                           build=i.get("build", "?"), compiler=i.get("compiler", "?"), flags=tuple(i.get("flags", ())))


def ratio_of(figure: dict[str, Any], info: InterpreterInfo | None = None) -> Comparison | None:
    """The ``Comparison`` of a pair figure (per-round ratios of its interleaved rounds); None for other kinds."""
    if figure.get("kind") != "pair":
        return None
    labels = figure.get("labels", ["a", "b"])
    numbers = figure.get("number", [1, 1])
    extra: dict[str, Any] = {"clock": figure.get("clock", "wall time"), "machine": machine()}
    if info is not None:
        extra["interpreter"] = info
    a = Measurement.from_samples(figure["a"], label=labels[0], number=numbers[0], **extra)
    b = Measurement.from_samples(figure["b"], label=labels[1], number=numbers[1], **extra)
    from ._compare import Comparison

    return Comparison(a, b, paired=True, rounds=len(figure["a"]), stop_reason=figure.get("stop_reason", ""))


@dataclass
class Report:
    """Every run, with each pair's ``Comparison`` computed: what the table, the figure and the JSON show."""

    runs: list[SuiteRun]
    skipped: list[Skipped] = field(default_factory=list)
    comparisons: dict[tuple[int, str], Comparison] = field(default_factory=dict)
    budget: float = DEFAULT_BUDGET
    quick: bool = False

    @property
    def ok_runs(self) -> list[SuiteRun]:
        """The runs that returned a result, in column order."""
        return [r for r in self.runs if r.ok]

    def comparison(self, run: SuiteRun, key: str) -> Comparison | None:
        """The comparison of figure ``key`` in ``run`` (None when it is not a pair or did not run)."""
        return self.comparisons.get((id(run), key))

    def ratio(self, run: SuiteRun, key: str) -> tuple[float, float, float] | None:
        """``(ratio, ci_low, ci_high)`` of a ratio figure; memory is exact, so its interval is the point."""
        fig = (run.result or {}).get("figures", {}).get(key, {})
        if fig.get("kind") == "bytes" and fig.get("b"):
            r = fig["a"] / fig["b"]
            return r, r, r
        c = self.comparison(run, key)
        return (c.ratio, c.ci[0], c.ci[1]) if c is not None else None


def analyse(runs: Sequence[SuiteRun], skipped: Sequence[Skipped] = (), *, budget: float = DEFAULT_BUDGET,
            quick: bool = False) -> Report:
    """Compute every pair's ratio and interval (bootstrap: about 20 ms per pair)."""
    report = Report(list(runs), list(skipped), budget=budget, quick=quick)
    for run in report.ok_runs:
        assert run.result is not None
        info = _info(run.result)
        for key, fig in run.result.get("figures", {}).items():
            try:
                comparison = ratio_of(fig, info)
            except (ValueError, KeyError, TypeError) as exc:  # too few or bad samples: say so in the cell
                fig["kind"], fig["reason"] = "error", f"unusable samples ({exc})"
                continue
            if comparison is not None:
                report.comparisons[(id(run), key)] = comparison
    return report


def _spread(samples: Sequence[float]) -> float:
    """Half the interquartile range over the median: robust to the odd disturbed sample."""
    if len(samples) < 2:
        return 0.0
    q1, med, q3 = statistics.quantiles(samples, n=4, method="inclusive")  # numpy's default (linear) quartiles
    return (q3 - q1) / 2 / med if med else 0.0


def _time_cell(samples: Sequence[float]) -> str:
    return f"{format_seconds(statistics.median(samples))} ±{_spread(samples) * 100:.0f} %"


def _num(x: float) -> str:
    """A ratio with three significant figures and no exponent: 1.30, 14.4, 5,580."""
    if not math.isfinite(x):
        return str(x)
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def _cells(report: Report, run: SuiteRun, spec: FigureSpec) -> list[str]:
    """The cells of ``spec``'s rows for one run (as many as ``_row_labels`` gives)."""
    rows = len(_row_labels(spec))
    fig = (run.result or {}).get("figures", {}).get(spec.key)
    if fig is None:
        return ["not run"] + [""] * (rows - 1)
    kind = fig.get("kind")
    if kind in ("missing", "error"):
        reason = fig.get("reason", "")
        # "orjson not installed (No module named 'orjson')" -> "orjson not installed": name what is missing,
        # so it is not read as the row's first form (json.dumps) being missing.
        word = reason.split(" (", 1)[0] if "not installed" in reason else (
            "not importable" if kind == "missing" else "error")
        return [word] + [""] * (rows - 1)
    if kind == "bytes":
        return [f"{fig['a']:.0f} B", f"{fig['b']:.0f} B", f"{_num(fig['a'] / fig['b'])}", "exact"]
    if kind == "pair":
        c = report.comparison(run, spec.key)
        if c is None:
            return ["error"] + [""] * (rows - 1)
        return [_time_cell(fig["a"]), _time_cell(fig["b"]), f"{_num(c.ratio)} [{_num(c.ci[0])}–{_num(c.ci[1])}]",
                c.outcome]
    if kind == "samples":
        return [f"{_time_cell(fig['samples'])} (n={len(fig['samples'])})"]
    if kind == "passes":
        per_pass = statistics.median(fig["samples"])
        return [f"{format_rate(fig['ops'] / per_pass)} ±{_spread(fig['samples']) * 100:.0f} %"]
    return ["?"] + [""] * (rows - 1)


def _row_labels(spec: FigureSpec) -> list[str]:
    if spec.key in ("gc_young", "bare_book"):
        return [spec.title]
    a, b = (s.strip() for s in spec.title.split(": ", 1)[1].split(" / ", 1))
    return [f"{spec.title.split(': ', 1)[0]}: {a}", f"  {b}", "  ratio [95 % CI]", "  outcome"]


def _quoted_cells(spec: FigureSpec, quick: bool = False) -> list[str]:
    rows = len(_row_labels(spec))
    quoted = ("6.5 ms (50 000 obj.)", "—") if spec.key == "gc_freeze" and quick else spec.quoted
    cells = list(quoted) + [""] * rows
    cells = cells[:rows]
    if rows == 4:
        cells[2] = _num(spec.quoted_ratio) if spec.quoted_ratio is not None else ""
        cells[3] = ""
    return [c or "—" for c in cells]


TABLE_WIDTH = 100
"""Columns the text table fits in: wider, its interpreters are split into blocks, each with the row titles."""

QUOTED_HEADER = ("Python engine notes", "quoted, CPython 3.14.10")
"""The quoted column's two header lines (``QUOTED_SOURCE`` split so the column stays narrow)."""


def _blocks(label_width: int, widths: Sequence[int], width: int) -> list[list[int]]:
    """Column indexes grouped so each block's line, row titles included, fits ``width`` (at least one column each).

    >>> _blocks(30, [20, 20, 20, 25], 100)
    [[0, 1, 2], [3]]
    """
    blocks: list[list[int]] = [[]]
    used = label_width
    for i, w in enumerate(widths):
        if blocks[-1] and used + 2 + w > width:
            blocks.append([])
            used = label_width
        blocks[-1].append(i)
        used += 2 + w
    return blocks


def render_table(report: Report, *, width: int = TABLE_WIDTH) -> str:
    """The text table: one column per interpreter that ran, then the Python engine notes' quoted column.

    Rows are the figures (a pair as four rows: each form's time, the ratio with its
    95 % interval, the outcome). When the columns do not fit ``width`` characters,
    they are split into blocks one under the other, each repeating the row titles;
    the notes under the table are wrapped to the same width.
    """
    runs = report.ok_runs
    lines: list[str] = []
    if runs:
        labels = ["figure", ""]
        columns: list[list[str]] = [[r.interpreter.name, r.interpreter.source] for r in runs] + [list(QUOTED_HEADER)]
        for spec in SPECS:
            cells = [_cells(report, r, spec) for r in runs] + [_quoted_cells(spec, report.quick)]
            for i, label in enumerate(_row_labels(spec)):
                labels.append(label)
                for column, cell in zip(columns, cells, strict=True):
                    column.append(cell[i])
        facts = [(r.result or {}).get("facts", {}) for r in runs]
        labels.append("gc: default thresholds")
        for column, value in zip(columns, [str(tuple(f.get("gc_threshold", ()))) for f in facts] + ["(2000, 10, 10)"],
                                 strict=True):
            column.append(value)
        labels.append("gc: atomic-value dict tracked")
        for column, value in zip(columns, [("yes" if f.get("atomic_dict_tracked") else "no") if f else "?"
                                           for f in facts] + ["—"], strict=True):
            column.append(value)
        label_width = max(len(label) for label in labels)
        for k, block in enumerate(_blocks(label_width, [max(len(c) for c in col) for col in columns], width)):
            if k:
                lines.append("")
            rows = [[label] + [columns[i][r] for i in block] for r, label in enumerate(labels)]
            lines += _align(rows)
        sizes = (runs[0].result or {}).get("sizes", {})
        clocks = sorted({(r.result or {}).get("clock", "?") for r in runs})
        notes = [f"times are medians ± half the interquartile range; clock: {', '.join(clocks)}; "
                 f"budget {report.budget:g} s per comparison{' (quick sizes)' if report.quick else ''}"]
        if sizes:
            notes.append(f"full collection over {sizes.get('gc_objects', 0):,} live objects (2 tracked each); "
                         f"young pauses while {sizes.get('young_allocations', 0):,} lists are kept; "
                         f"BareBook on {sizes.get('book_ops', 0):,} operations per pass")
        notes.append("ratio = left / right of the row title; above 1 the right-hand technique is cheaper; outcome "
                     "worded from the 95 % CI (±5 % counts as the same)")
        notes.append(f"machine: {machine()}")
        lines += [wrapped for note in notes for wrapped in textwrap.wrap(note, width, subsequent_indent="  ")]
    else:
        lines.append("no interpreter produced a result")
    lines += [r.error_line() for r in report.runs if not r.ok]
    return "\n".join(lines)


CHANGE_FACTOR = 1.5
"""A ratio "changes with the interpreter" when its highest and lowest differ by this factor, intervals apart.

Each interval reflects the noise within one run; separate processes (and a busy
machine) move a ratio by more than that, so intervals that merely do not overlap
are not enough to call a change.
"""


def changes(report: Report) -> list[str]:
    """One line per ratio: its range over the interpreters, and whether it, or its outcome, changed between them.

    A ratio changed when its highest value is at least ``CHANGE_FACTOR`` times
    its lowest and their 95 % intervals do not overlap; an outcome changed when
    the interpreters' comparisons reached different outcomes (slower / same / ...).
    """
    runs = report.ok_runs
    lines = []
    for spec in SPECS:
        values = [(r, v) for r in runs if (v := report.ratio(r, spec.key)) is not None]
        if not values:
            continue
        low_run, low = min(values, key=lambda rv: rv[1][0])
        high_run, high = max(values, key=lambda rv: rv[1][0])
        line = f"{spec.title}: {_num(low[0])} on {low_run.interpreter.version}"
        if len(values) == 1:
            line += " (one interpreter)"
        else:
            line += f" to {_num(high[0])} on {high_run.interpreter.version}; "
            factor = high[0] / low[0] if low[0] > 0 else math.inf
            if high[1] > low[2] and factor >= CHANGE_FACTOR:
                line += f"CHANGES with the interpreter ({_num(factor)}x, intervals apart)"
            elif high[1] > low[2]:
                line += f"within {CHANGE_FACTOR:g}x on every interpreter"
            else:
                line += "not shown to differ (intervals overlap)"
        outcomes: dict[str, list[str]] = {}
        for r, _ in values:
            c = report.comparison(r, spec.key)
            outcomes.setdefault(c.outcome if c is not None else "exact", []).append(r.interpreter.version)
        if len(outcomes) > 1:
            line += "; OUTCOME differs: " + ", ".join(f"{o} on {'/'.join(v)}" for o, v in outcomes.items())
        if spec.quoted_ratio is not None:
            line += f"; the Python engine notes on 3.14: {_num(spec.quoted_ratio)}"
        lines.append(line)
    return lines


def to_json(report: Report) -> dict[str, Any]:
    """Everything as plain data: each run's raw child result, its computed ratios, the quoted column, the skips."""
    out: dict[str, Any] = {
        "machine": str(machine()), "budget": report.budget, "quick": report.quick, "quoted_source": QUOTED_SOURCE,
        "quoted": {s.key: {"values": list(s.quoted), "ratio": s.quoted_ratio} for s in SPECS},
        "skipped": [{"path": s.path, "source": s.source, "reason": s.reason} for s in report.skipped],
        "interpreters": [],
    }
    for run in report.runs:
        entry: dict[str, Any] = {"path": run.interpreter.path, "source": run.interpreter.source,
                                 "version": run.interpreter.version, "ok": run.ok, "error": run.error,
                                 "seconds": run.seconds, "result": run.result, "ratios": {}}
        for spec in SPECS:
            c = report.comparison(run, spec.key)
            if c is not None:
                entry["ratios"][spec.key] = {"ratio": c.ratio, "ci": list(c.ci), "outcome": c.outcome,
                                             "verdict": c.verdict, "rounds": c.rounds}
            elif (r := report.ratio(run, spec.key)) is not None:
                entry["ratios"][spec.key] = {"ratio": r[0], "ci": [r[1], r[2]], "outcome": "exact"}
        out["interpreters"].append(entry)
    return out


# --------------------------------------------------------------------------- command line


def add_parser(sub: Any) -> None:
    """Register ``versions``."""
    p = sub.add_parser(
        "versions",
        help="run the course's headline measurements on every CPython found, side by side",
        description=("Find the CPython 3.10+ interpreters on this machine (this one, --python, pyenv, uv, PATH, "
                     "py -0p), run the same suite of the course's headline measurements in each (a fresh process, "
                     "standard library only; orjson and the engine where they import) and print one table, "
                     "interpreters as columns, the Python engine notes' quoted CPython 3.14 figures beside them "
                     "(split into blocks to fit 100 columns). Progress goes to stderr with --verbose. "
                     "Example: python -m edumatcher versions --quick --json versions.json"),
    )
    p.add_argument("--python", action="append", default=[], metavar="PATH",
                   help="also run this interpreter (repeatable)")
    p.add_argument("--only-python", action="store_true",
                   help="run only the --python interpreters (and this one): no discovery")
    p.add_argument("--budget", type=float, default=None, metavar="S",
                   help=f"seconds per comparison (default {DEFAULT_BUDGET:g}; {QUICK_BUDGET:g} with --quick)")
    p.add_argument("--quick", action="store_true", help="short budget and smaller collector and book sizes")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the raw numbers to FILE")
    p.add_argument("--figure", type=Path, default=Path("versions.png"), metavar="FILE",
                   help="where to save the figure (default versions.png)")
    p.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="print progress on stderr, and every skipped candidate with its reason")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edumatcher import CliError

    budget = args.budget if args.budget is not None else (QUICK_BUDGET if args.quick else DEFAULT_BUDGET)
    if not 0 < budget <= 60:
        raise CliError(f"--budget must be above 0 and at most 60 seconds, got {budget:g}")
    for path in args.python:
        if not (os.path.isfile(path) or shutil.which(path)):
            raise CliError(f"--python {path}: no such file")

    def say(line: str) -> None:
        if args.verbose:
            print(line, file=sys.stderr, flush=True)

    where: dict[str, Any] = {}
    if args.only_python:
        where = {"path_env": "", "pyenv_root": os.devnull, "uv_root": os.devnull, "py_launcher": lambda: ""}
    say("versions: looking for interpreters")
    found = discover([shutil.which(p) or p for p in args.python], **where)
    for s in found.skipped:
        say(f"  {s}")
    if not found.found:
        raise CliError("no CPython 3.10+ interpreter found; pass one with --python PATH")
    say(f"versions: {len(found.found)} interpreter(s), budget {budget:g} s per comparison"
        f"{', quick sizes' if args.quick else ''}")
    if not args.verbose:
        print(f"running the suite on {len(found.found)} interpreter(s), one after another "
              f"(--verbose shows progress)...", file=sys.stderr, flush=True)
    runs = run_all(found.found, budget=budget, quick=args.quick, say=say)
    report = analyse(runs, found.skipped, budget=budget, quick=args.quick)
    print(render_table(report))
    if found.skipped and not args.verbose:
        print(f"{skipped_summary(found.skipped)} (--verbose lists them)")
    print()
    print("between interpreters:")
    for line in changes(report):
        print(textwrap.fill(line, TABLE_WIDTH, initial_indent="  ", subsequent_indent="    "))
    if args.json is not None:
        args.json.write_text(json.dumps(to_json(report), indent=1), encoding="utf-8")
        print(f"raw numbers: {args.json}")
    if not args.no_figure and report.ok_runs:
        ratio_bars(report).savefig(args.figure, dpi=120)
        print(f"figure: {args.figure}")
    return 0 if all(r.ok for r in report.runs) else 1  # every interpreter was still reported


RATIO_KEYS = tuple(s.key for s in SPECS if s.key not in ("gc_young", "bare_book"))
"""The figures drawn: every one that is a ratio (without / with the technique)."""

QUOTED_COLOUR = "#000000"

_PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")
"""One distinct colour per interpreter (ColorBrewer's Dark2), in column order."""

LOG_ABOVE = 50.0
"""A panel of ``ratio_bars`` uses a log axis when its largest ratio is this many times its smallest."""


def ratio_bars(report: Report, *, title: str = "") -> Figure:
    """One panel per ratio, each with its own scale; in each, one bar per interpreter, whiskers at the 95 % CI.

    Each ratio gets its own axis, linear from 0 (a log axis only when its values
    span more than ``LOG_ABOVE`` times: the freeze's thousands), so a 1.3x and a
    20x ratio are both read at their own size. Each interpreter has its own
    colour, the same in every panel, named once in the legend under the panels.
    A black diamond marks the Python engine notes' quoted CPython 3.14 ratio where
    it printed both figures; a figure an interpreter could not produce (orjson or
    the engine missing) has no bar and a small "n/a". The dotted line at 1 is "no
    difference": above it, the technique on the right of the title saves time.
    """
    from matplotlib.figure import Figure  # here: the command line needs matplotlib only to draw
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter

    runs = report.ok_runs
    specs = [s for s in SPECS if s.key in RATIO_KEYS]
    ncols = 3
    nrows = math.ceil(len(specs) / ncols)
    fig = Figure(figsize=(11, 2.5 * nrows + 1.2), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    colours = {id(run): _PALETTE[i % len(_PALETTE)] for i, run in enumerate(runs)}
    for ax, spec in zip(axes[: len(specs)], specs, strict=True):
        values = []
        for i, run in enumerate(runs):
            value = report.ratio(run, spec.key)
            if value is None or not all(math.isfinite(v) and v > 0 for v in value):
                reason = (run.result or {}).get("figures", {}).get(spec.key, {}).get("reason", "")
                ax.annotate(reason.split(" (", 1)[0] if "not installed" in reason else "n/a", xy=(i, 0),
                            xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, color="#666666", rotation=90)
                continue
            ratio, low, high = value
            values.append((ratio, low, high))
            ax.bar([i], [ratio], width=0.7, color=colours[id(run)], yerr=[[max(ratio - low, 0.0)], [max(high - ratio, 0.0)]],
                   capsize=3, ecolor="#333333")
        top = max([h for _, _, h in values] + [spec.quoted_ratio or 0.0, 1.0])
        bottom = min([lo for _, lo, _ in values] + [spec.quoted_ratio or top, 1.0])
        if top / bottom > LOG_ABOVE:
            ax.set_yscale("log")
            ax.set_ylim(bottom / 2, top * 2)
            ax.set_ylabel("ratio (log scale)", fontsize=8)
        else:
            ax.set_ylim(0, top * 1.15)
            ax.set_ylabel("ratio", fontsize=8)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}x" if v >= 10 and v == round(v) else f"{v:g}x"))
        if spec.quoted_ratio is not None:
            ax.axhline(spec.quoted_ratio, color=QUOTED_COLOUR, linestyle="--", linewidth=1)
            ax.plot([len(runs) - 0.35], [spec.quoted_ratio], marker="D", color=QUOTED_COLOUR, markersize=5)
        ax.axhline(1.0, color="#555555", linestyle=":", linewidth=1)
        ax.set_xticks(range(len(runs)), [r.interpreter.version for r in runs], fontsize=7)
        ax.set_xlim(-0.6, len(runs) - 0.2)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(spec.title.split(": ", 1)[1], fontsize=8.5)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in axes[len(specs):]:
        ax.set_visible(False)
    handles = [Patch(color=colours[id(r)], label=f"{r.interpreter.name} ({r.interpreter.source})") for r in runs]
    if any(s.quoted_ratio is not None for s in specs):
        handles.append(Line2D([], [], color=QUOTED_COLOUR, linestyle="--", marker="D", markersize=5,
                              label="quoted: Python engine notes, CPython 3.14.10"))
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=min(len(handles), 4), frameon=False)
    fig.suptitle(title or "The course's headline ratios, without / with each technique, on each interpreter "
                 "(measured here; whiskers: 95 % CI; each panel its own scale)", fontsize=10)
    return fig
