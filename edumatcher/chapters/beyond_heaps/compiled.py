"""When to compile: one hot loop of a matching engine as Python, as NumPy, and compiled with Cython.

The loop is the *sweep*: an aggressive buy order for ``want`` lots walks the ask
side's price levels from the best one outwards, taking what each level holds
until it is filled. The levels are an array of resting quantity indexed by
``price - low`` (the layout of chapter 12's array store), so the loop is the
engine's matching walk with the per-order bookkeeping stripped away. It reads
and never writes, so it can be timed again and again on the same book.

Three forms return the same ``(filled, cost, scanned)``: lots filled, their cost
in ticks x lots, and the levels the walk passed (its index distance from ``best``):

* ``sweep_python``: the loop in Python (fastest over a ``list``, chapter 12);
* ``sweep_numpy``: no Python loop, ``numpy.cumsum`` + ``searchsorted`` over every
  level from ``best`` onwards, in C, but over the whole side whatever the order needs;
* ``SWEEP_PYX`` built by ``build_sweep``: the Python loop with C types (Cython),
  taking any contiguous buffer of int64 (``array('q')``, a NumPy array) without a copy.

``build_sweep`` compiles the Cython source at run time into a temporary folder
(``Cython.Build.cythonize`` + setuptools' ``build_ext``, so it needs no
``distutils``, which 3.12 removed), times the build, and returns a ``Build``; where
Cython or a C compiler is missing it returns ``Build(None, reason=...)`` instead
of raising. Builds are kept in ``CACHE_DIR`` with their build time and reused by
later runs (as ``pyximport`` does), so only a first run pays for the compiler.

>>> qty = [0, 5, 0, 7, 2]           # ticks low..low+4; the best ask is index 1
>>> sweep_python(qty, 1, 9, 100)    # 5 lots at 101, 4 at 103
(9, 917, 3)
>>> sweep_numpy(__import__("numpy").array(qty), 1, 9, 100)
(9, 917, 3)
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import random
import shutil
import sysconfig
import tempfile
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from edumatcher.kit import Comparison, format_seconds
from edumatcher.kit.side_by_side import SideBySide, measured_here, side_by_side

__all__ = [
    "SWEEP_PYX", "sweep_python", "sweep_numpy", "Build", "CACHE_DIR", "compiler_missing", "build_sweep", "SweepBook",
    "sweep_book", "PYTHON", "sweep_results_table", "sweep_verdicts",
]

SWEEP_PYX = """\
# cython: language_level=3, boundscheck=False, wraparound=False
from libc.stdint cimport int64_t
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_FORMAT, PyBUF_C_CONTIGUOUS

def sweep(qty, Py_ssize_t best, int64_t want, int64_t low):
    # sweep_python with C types: the same walk over the raw int64 buffer, no boxing, no reference counts.
    # (The raw buffer protocol, not a typed memoryview, which builds five times as much C: a slower build.)
    cdef Py_buffer view
    cdef const int64_t* q
    cdef Py_ssize_t i = best, n
    cdef int64_t filled = 0, cost = 0, take, level
    PyObject_GetBuffer(qty, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
    try:
        if view.itemsize != 8 or view.format[0] not in b"ql" or view.format[1] != 0:
            raise TypeError("qty must be a buffer of int64, such as array('q') or an int64 NumPy array")
        q = <const int64_t*> view.buf
        n = view.len // 8
        while i < n and filled < want:
            level = q[i]
            if level:
                take = level if level < want - filled else want - filled
                filled += take
                cost += take * (low + i)
            i += 1
    finally:
        PyBuffer_Release(&view)
    return filled, cost, i - best
"""
"""The compiled form's source: ``sweep_python`` with C types (over the raw int64 buffer)."""


def sweep_python(qty: Sequence[int], best: int, want: int, low: int) -> tuple[int, int, int]:
    """Fill ``want`` lots from the levels ``qty[best:]``, best first; ``(filled, cost, scanned)``. O(levels walked).

    ``cost`` is the sum of lots x price, the price of index ``i`` being ``low + i``;
    ``scanned`` is how many levels the walk passed (empty ones included).

    >>> sweep_python([3, 0, 4], 0, 100, 10)  # the side runs out: everything, 3 at 10 and 4 at 12
    (7, 78, 3)
    """
    filled = cost = 0
    i, n = best, len(qty)
    while i < n and filled < want:
        q = qty[i]
        if q:
            take = q if q < want - filled else want - filled
            filled += take
            cost += take * (low + i)
        i += 1
    return filled, cost, i - best


def sweep_numpy(qty: Any, best: int, want: int, low: int) -> tuple[int, int, int]:
    """``sweep_python`` without a Python loop: a running total of the side and a binary search, in NumPy.

    ``qty`` is a 1-D int64 NumPy array. The running total covers every level from
    ``best`` to the end of the side, because NumPy cannot stop where the order is
    filled: O(side) work in C, plus a fixed cost per NumPy call.

    >>> import numpy as np
    >>> sweep_numpy(np.array([3, 0, 4]), 0, 5, 10)  # 3 at 10, 2 at 12
    (5, 54, 3)
    """
    import numpy as np  # a course dependency; imported here so the engine never needs it

    side = qty[best:]
    if want <= 0 or len(side) == 0:
        return 0, 0, 0
    running = np.cumsum(side)
    k = int(np.searchsorted(running, want))  # the first level at which the running total reaches want
    if k >= len(side):  # the side runs out first: take everything
        k = len(side) - 1
        filled = int(running[-1])
    else:
        filled = want
    taken = side[: k + 1].copy()
    taken[k] -= int(running[k]) - filled  # the last level gives only what is still wanted
    prices = np.arange(low + best, low + best + k + 1, dtype=np.int64)
    return filled, int(taken @ prices), k + 1


@dataclass(frozen=True)
class Build:
    """The compiled sweep (``sweep`` is None where it could not be built, and ``reason`` says why).

    ``seconds`` is the wall time of the whole build (Cython to C, C to a shared
    library, the import); ``tools`` names the Cython version and the C compiler.
    ``reused`` is True when the module came from the on-disk cache of an earlier
    build (``seconds`` is then that build's time, and ``path`` is where it lies).
    """

    sweep: Callable[[Any, int, int, int], tuple[int, int, int]] | None
    seconds: float = 0.0
    tools: str = ""
    reason: str = ""
    reused: bool = False
    path: str = ""

    def describe(self) -> str:
        """One line for the chapter: the build time and tools, where it came from, or why there is none.

        >>> Build(None, reason="skipped: no C compiler found").describe()
        'skipped: no C compiler found'
        """
        if self.sweep is None:
            return self.reason
        if self.reused:
            return (f"reused an earlier run's build, which took {self.seconds:.1f} s (wall time, {self.tools}); "
                    f"delete {self.path} to time a fresh one")
        return f"compiled in {self.seconds:.1f} s (wall time, {self.tools})"


def _c_compiler() -> str | None:
    """Path of the C compiler setuptools would call (``CC`` or this interpreter's configured one), or None."""
    configured = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(configured.split()[0])


def compiler_missing() -> str:
    """Why the sweep cannot be compiled here ("" when Cython, setuptools, a C compiler and ``Python.h`` are there)."""
    for name in ("Cython", "setuptools"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed (pip install cython setuptools)"
    if _c_compiler() is None:
        return "no C compiler found (on Debian or Ubuntu: apt-get install gcc; elsewhere, set CC to one)"
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        return f"this interpreter's C headers are missing ({include}/Python.h; install the python3-dev package)"
    return ""


_BUILDS: dict[str, Build] = {}

CACHE_DIR = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                         "edumatcher-cython")
"""Where built modules are kept between runs, one per source, Cython version and interpreter ABI.

Per user, as ``pyximport``'s ``~/.pyxbld``: a shared, world-writable folder such as
``/tmp`` would let another user plant a library that this process then imports.
"""


def _load(name: str, path: str) -> Callable[[Any, int, int, int], tuple[int, int, int]]:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import a module from {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sweep  # type: ignore[no-any-return]


def _compile(name: str, source: str, target: str) -> None:
    """Cython ``source`` to C, C to an extension module, moved to ``target``; compiler output kept quiet."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    folder = tempfile.mkdtemp(prefix="edumatcher_cython_")
    try:
        pyx = os.path.join(folder, f"{name}.pyx")
        with open(pyx, "w", encoding="utf-8") as file:
            file.write(source)
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            # No debug info and -O1: this one loop runs as fast, and the build (timed, inside a 60 s chapter)
            # takes about 40 % less than with the interpreter's default "-g -O3" (gcc, measured on a 2-CPU VM).
            flags = ["-g0", "-O1"] if os.name == "posix" else []
            extensions = cythonize([Extension(name, [pyx], extra_compile_args=flags)], quiet=True, build_dir=folder)
            command = build_ext(Distribution({"ext_modules": extensions, "script_args": ["-q"]}))
            command.build_lib, command.build_temp = folder, os.path.join(folder, "tmp")
            command.ensure_finalized()
            command.run()
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(command.get_ext_fullpath(name), target)  # atomic: a concurrent run sees all of it or nothing
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build_sweep(source: str = SWEEP_PYX, *, cache: bool = True) -> Build:
    """Compile ``source`` (a Cython module defining ``sweep``) at run time, import it, and time it all.

    Never raises for a missing tool or a failed compile: returns ``Build(None,
    reason=...)`` with one readable line. With ``cache`` (the default), the build is
    kept in ``CACHE_DIR`` with its build time, as ``pyximport`` keeps its builds, and
    reused (``reused=True``) by later runs on the same interpreter ABI and Cython; a
    second call in one process returns the first result. ``cache=False`` always builds.
    """
    missing = compiler_missing()
    if missing:
        return Build(None, reason=f"skipped: {missing}")
    import Cython

    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    digest = hashlib.sha256(f"{source}|{Cython.__version__}|{suffix}".encode()).hexdigest()[:12]
    if cache and digest in _BUILDS:
        return _BUILDS[digest]
    name = f"_edumatcher_sweep_{digest}"
    tools = f"Cython {Cython.__version__}, {os.path.basename(_c_compiler() or 'cc')}"
    keep = cache
    if keep:
        try:
            os.makedirs(CACHE_DIR, exist_ok=True)
        except OSError:  # no writable cache folder: build anyway, just not for later runs
            keep = False
    target = os.path.join(CACHE_DIR if keep else tempfile.mkdtemp(prefix="edumatcher_cython_"), name + suffix)
    record = target + ".json"
    build: Build | None = None
    if keep and os.path.exists(target) and os.path.exists(record):
        try:
            with open(record, encoding="utf-8") as file:
                seconds = float(json.load(file)["seconds"])
            build = Build(_load(name, target), seconds, tools, reused=True, path=target)
        except Exception:  # a damaged cache entry is rebuilt below, never trusted
            build = None
    if build is None:
        started = time.perf_counter()
        try:
            _compile(name, source, target)
            sweep = _load(name, target)
        except Exception as error:  # any failure of an optional build is reported, not raised
            if not keep:
                shutil.rmtree(os.path.dirname(target), ignore_errors=True)
            return Build(None, reason=f"skipped: the build failed ({type(error).__name__}: {error})")
        build = Build(sweep, time.perf_counter() - started, tools, path=target if keep else "")
        if keep:
            with open(record, "w", encoding="utf-8") as file:
                json.dump({"seconds": build.seconds, "tools": tools}, file)
        else:
            # A loaded extension stays mapped after its file is gone (POSIX); where it cannot be removed, it stays.
            shutil.rmtree(os.path.dirname(target), ignore_errors=True)
    if cache:
        _BUILDS[digest] = build
    return build


@dataclass(frozen=True)
class SweepBook:
    """One ask side of ``levels`` occupied ticks from ``low``, held three ways over the same numbers.

    ``as_list`` (Python ints), ``as_array`` (``array('q')``) and ``as_numpy`` (a
    NumPy view of ``as_array``'s buffer, no copy). ``want(k)`` is the order size
    that fills exactly the best ``k`` levels.
    """

    low: int
    as_list: list[int]
    as_array: array
    as_numpy: Any

    def want(self, k: int) -> int:
        """Lots held by the best ``k`` levels: an order of that size sweeps exactly ``k`` levels.

        >>> sweep_book(10).want(3) == sum(sweep_book(10).as_list[:3])
        True
        """
        if not 1 <= k <= len(self.as_list):
            raise ValueError(f"k must be within 1..{len(self.as_list)}, not {k!r}")
        return sum(self.as_list[:k])


def sweep_book(levels: int = 4_096, *, low: int = 10_000, seed: int = 10) -> SweepBook:
    """An ask side with every one of ``levels`` ticks occupied, 1 to 100 lots each (seeded).

    >>> book = sweep_book(8)
    >>> len(book.as_list), book.as_list == book.as_array.tolist() == book.as_numpy.tolist()
    (8, True)
    """
    import numpy as np

    if levels < 1:
        raise ValueError(f"levels must be >= 1, not {levels!r}")
    rnd = random.Random(seed)
    values = [rnd.randint(1, 100) for _ in range(levels)]
    stored = array("q", values)
    return SweepBook(low, values, stored, np.frombuffer(stored, dtype=np.int64))



PYTHON = "Python loop over a list"
"""The label of the baseline every other form is compared with."""


def sweep_results_table(results: Mapping[int, Mapping[str, Comparison]]) -> SideBySide:
    """One row per size: the median time of each form per sweep, and its ratio to the Python loop with the CI.

    ``results[k][form]`` is ``compare_interleaved(form, python_loop)`` for an order
    sweeping ``k`` levels. The Python loop's time is taken from the first form's comparison.
    """
    if not results:
        raise ValueError("no results to tabulate")
    forms = list(next(iter(results.values())))
    header = ["levels swept", "source", PYTHON] + [f"{form} (x Python's time, 95 % CI)" for form in forms]
    rows = []
    for k, by_form in results.items():
        python = next(iter(by_form.values())).b
        cells = [f"{format_seconds(c.a.median)}  ({c.ratio:.3g}x, {c.ci[0]:.3g}–{c.ci[1]:.3g})"
                 for c in by_form.values()]
        rows.append([f"{k:,}", measured_here(), format_seconds(python.median)] + cells)
    return side_by_side(header, rows)


def sweep_verdicts(results: Mapping[int, Mapping[str, Comparison]]) -> list[str]:
    """``verdict:`` lines for the smallest and the largest sweep, and where each form's advantage turns.

    Only the two ends are judged: they are far apart (see the chapter), so their
    categories do not flip from run to run; sizes in between are shown, not judged.
    Each form's line about the crossover is computed from the two ends' outcomes.
    """
    if not results:
        raise ValueError("no results to judge")
    small, large = min(results), max(results)
    lines = [f"verdict: {c.verdict}" for k in (small, large) for c in results[k].values()]
    for form in results[small]:
        first, last = results[small][form].outcome, results[large][form].outcome
        if first == last:
            lines.append(f"verdict: {form}: {first} than the Python loop at both ends "
                         f"({small:,} and {large:,} levels swept)")
        else:
            lines.append(f"verdict: {form}: {first} than the Python loop at {small:,} levels swept, {last} at "
                         f"{large:,}, so the advantage turns somewhere between")
    return lines
